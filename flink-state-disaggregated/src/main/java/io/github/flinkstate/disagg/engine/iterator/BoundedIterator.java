package io.github.flinkstate.disagg.engine.iterator;

import io.github.flinkstate.disagg.engine.key.Bytes;
import io.github.flinkstate.disagg.engine.key.KeyRange;
import java.io.IOException;

/**
 * Restricts an iterator to a key range. This is how a file is clipped to a key-group range at read
 * time (delayed tailoring): entries outside the range are simply never returned.
 *
 * <p>Thread safety: confined to one thread.
 */
public final class BoundedIterator implements InternalIterator {

    private final InternalIterator inner;
    private final KeyRange range;

    public BoundedIterator(InternalIterator inner, KeyRange range) {
        this.inner = inner;
        this.range = range;
    }

    @Override
    public void seek(byte[] target) throws IOException {
        inner.seek(Bytes.compare(target, range.lower()) < 0 ? range.lower() : target);
    }

    @Override
    public void seekToFirst() throws IOException {
        inner.seek(range.lower());
    }

    @Override
    public boolean valid() {
        return inner.valid() && Bytes.lessThanLimit(inner.key(), range.limit());
    }

    @Override
    public void next() throws IOException {
        inner.next();
    }

    @Override
    public byte[] key() {
        return inner.key();
    }

    @Override
    public long seq() {
        return inner.seq();
    }

    @Override
    public byte type() {
        return inner.type();
    }

    @Override
    public byte[] value() {
        return inner.value();
    }

    @Override
    public void close() {
        inner.close();
    }
}
