package io.github.flinkstate.disagg.engine.sst;

import io.github.flinkstate.disagg.engine.iterator.InternalIterator;
import java.io.IOException;

/**
 * A two-level iterator over one SST file: the in-memory block index, then one data block at a time
 * (so memory is one block whatever the file size), or, with {@link Readahead}, one readahead window
 * of consecutive blocks.
 *
 * <p>Thread safety: not thread-safe; confined to one reader thread. The underlying {@link
 * SstReader} is shared.
 */
public final class SstIterator implements InternalIterator {

    private final SstReader reader;
    private final Readahead readahead;
    private int blockIndex;
    private DataBlock.Cursor cursor;

    /**
     * @param readahead null: every block is read on its own through the block cache
     */
    SstIterator(SstReader reader, Readahead readahead) {
        this.reader = reader;
        this.readahead = readahead;
        this.blockIndex = reader.blockCount();
    }

    private DataBlock.Cursor cursor(int i) throws IOException {
        return reader.cursor(i, payload(i));
    }

    private byte[] payload(int i) throws IOException {
        return readahead == null ? reader.payload(i) : readahead.payload(i);
    }

    @Override
    public void seek(byte[] target) throws IOException {
        blockIndex = reader.findBlock(target);
        cursor = null;
        if (blockIndex < reader.blockCount()) {
            cursor = reader.cursorAt(blockIndex, payload(blockIndex), target);
            skipEmpty();
        }
    }

    @Override
    public void seekToFirst() throws IOException {
        blockIndex = 0;
        cursor = null;
        if (reader.blockCount() > 0) {
            cursor = cursor(0);
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
            cursor = cursor(blockIndex);
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

    @Override
    public void close() {
        if (readahead != null) {
            readahead.drop();
        }
    }

    /** Blocks in the current readahead window, 0 without one (for tests). */
    int readaheadWindowBlocks() {
        return readahead == null ? 0 : readahead.windowBlocks();
    }
}
