package io.github.flinkstate.disagg.engine.iterator;

import io.github.flinkstate.disagg.engine.key.Bytes;
import io.github.flinkstate.disagg.engine.key.EntryType;
import io.github.flinkstate.disagg.engine.key.KeyRange;
import java.io.Closeable;
import java.io.IOException;
import java.util.Arrays;

/**
 * The user-facing scan cursor: the live key/value pairs of a key range, in increasing key order,
 * merged from memtables and files and with point and prefix deletes applied.
 *
 * <p>Thread safety: not thread-safe; use from one thread. It pins the version it was created on
 * (files cannot be deleted underneath it) until {@link #close()}; always close it.
 *
 * <p>Visibility rule: for each key, only the newest entry (highest sequence number) counts; it is
 * visible when it is a put and no prefix tombstone with a higher sequence number covers it.
 */
public final class LsmIterator implements Closeable {

    /** Whether a prefix tombstone newer than sequence number {@code seq} covers {@code key}. */
    @FunctionalInterface
    public interface Shadowing {
        boolean covers(byte[] key, long seq);
    }

    private final InternalIterator merged;
    private final KeyRange range;
    private final Shadowing shadowing;
    private final Runnable onClose;
    private byte[] key;
    private byte[] value;
    private boolean closed;

    public LsmIterator(
            InternalIterator merged, KeyRange range, Shadowing shadowing, Runnable onClose)
            throws IOException {
        this.merged = merged;
        this.range = range;
        this.shadowing = shadowing;
        this.onClose = onClose;
        merged.seek(range.lower());
        advance();
    }

    public boolean isValid() {
        return key != null;
    }

    public byte[] key() {
        return key;
    }

    public byte[] value() {
        return value;
    }

    public void next() throws IOException {
        advance();
    }

    /**
     * Repositions at the first live key {@code >= target} (and inside the range); cheaper than a
     * new iterator because the pinned view and open files are reused.
     */
    public void seek(byte[] target) throws IOException {
        merged.seek(Bytes.compare(target, range.lower()) < 0 ? range.lower() : target);
        advance();
    }

    private void advance() throws IOException {
        key = null;
        value = null;
        while (merged.valid()) {
            byte[] k = merged.key();
            if (!Bytes.lessThanLimit(k, range.limit())) {
                return;
            }
            long seq = merged.seq();
            byte type = merged.type();
            byte[] v = merged.value();
            do {
                merged.next(); // skip older versions of the same key
            } while (merged.valid() && Arrays.equals(merged.key(), k));
            if (type == EntryType.PUT && !shadowing.covers(k, seq)) {
                key = k;
                value = v;
                return;
            }
        }
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            merged.close();
            onClose.run();
        }
    }
}
