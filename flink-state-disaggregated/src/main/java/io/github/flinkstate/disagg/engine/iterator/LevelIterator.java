package io.github.flinkstate.disagg.engine.iterator;

import io.github.flinkstate.disagg.engine.key.Bytes;
import io.github.flinkstate.disagg.engine.key.KeyRange;
import java.io.IOException;
import java.util.List;

/**
 * Concatenates the files of one sorted level (non-overlapping effective ranges, ascending), opening
 * one file iterator at a time so memory stays at one block per level.
 *
 * <p>Thread safety: confined to one thread.
 */
public final class LevelIterator implements InternalIterator {

    /** Opens the clipped iterator of the i-th file. */
    @FunctionalInterface
    public interface Opener {
        InternalIterator open(int index) throws IOException;
    }

    private final List<KeyRange> ranges;
    private final Opener opener;
    private int index;
    private InternalIterator current;

    /**
     * @param ranges the effective ranges of the level's files, ascending and disjoint
     */
    public LevelIterator(List<KeyRange> ranges, Opener opener) {
        this.ranges = ranges;
        this.opener = opener;
        this.index = ranges.size();
    }

    @Override
    public void seek(byte[] target) throws IOException {
        int i = 0;
        while (i < ranges.size() && !Bytes.lessThanLimit(target, ranges.get(i).limit())) {
            i++;
        }
        open(i);
        if (current != null) {
            current.seek(target);
            skipExhausted();
        }
    }

    @Override
    public void seekToFirst() throws IOException {
        open(0);
        if (current != null) {
            current.seekToFirst();
            skipExhausted();
        }
    }

    @Override
    public boolean valid() {
        return current != null && current.valid();
    }

    @Override
    public void next() throws IOException {
        current.next();
        skipExhausted();
    }

    private void skipExhausted() throws IOException {
        while (current != null && !current.valid()) {
            open(index + 1);
            if (current != null) {
                current.seekToFirst();
            }
        }
    }

    private void open(int i) throws IOException {
        if (current != null) {
            current.close();
        }
        index = i;
        current = i < ranges.size() ? opener.open(i) : null;
    }

    @Override
    public byte[] key() {
        return current.key();
    }

    @Override
    public long seq() {
        return current.seq();
    }

    @Override
    public byte type() {
        return current.type();
    }

    @Override
    public byte[] value() {
        return current.value();
    }

    @Override
    public void close() {
        if (current != null) {
            current.close();
            current = null;
        }
    }
}
