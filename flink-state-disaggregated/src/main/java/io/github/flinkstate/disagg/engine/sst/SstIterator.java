package io.github.flinkstate.disagg.engine.sst;

import io.github.flinkstate.disagg.engine.iterator.InternalIterator;
import java.io.IOException;

/**
 * A two-level iterator over one SST file: the in-memory block index, then one data block at a time
 * (so memory is one block whatever the file size).
 *
 * <p>Thread safety: not thread-safe; confined to one reader thread. The underlying {@link
 * SstReader} is shared.
 */
public final class SstIterator implements InternalIterator {

    private final SstReader reader;
    private int blockIndex;
    private DataBlock.Cursor cursor;

    SstIterator(SstReader reader) {
        this.reader = reader;
        this.blockIndex = reader.blockCount();
    }

    @Override
    public void seek(byte[] target) throws IOException {
        blockIndex = reader.findBlock(target);
        cursor = null;
        if (blockIndex < reader.blockCount()) {
            cursor = reader.cursor(blockIndex);
            cursor.seek(target);
            skipEmpty();
        }
    }

    @Override
    public void seekToFirst() throws IOException {
        blockIndex = 0;
        cursor = null;
        if (reader.blockCount() > 0) {
            cursor = reader.cursor(0);
            skipEmpty();
        }
    }

    @Override
    public boolean valid() {
        return cursor != null && cursor.valid();
    }

    @Override
    public void next() throws IOException {
        cursor.next();
        skipEmpty();
    }

    private void skipEmpty() throws IOException {
        while (!cursor.valid() && blockIndex + 1 < reader.blockCount()) {
            blockIndex++;
            cursor = reader.cursor(blockIndex);
        }
    }

    @Override
    public byte[] key() {
        return cursor.key();
    }

    @Override
    public long seq() {
        return cursor.seq();
    }

    @Override
    public byte type() {
        return cursor.type();
    }

    @Override
    public byte[] value() {
        return cursor.value();
    }
}
