package io.github.flinkstate.disagg.engine.iterator;

import io.github.flinkstate.disagg.engine.key.Bytes;
import io.github.flinkstate.disagg.engine.memtable.Memtable;

/**
 * Iterates a {@link Memtable}; weakly consistent with concurrent writes.
 *
 * <p>Thread safety: confined to one thread.
 */
public final class MemtableIterator implements InternalIterator {

    private final Memtable.Cursor cursor;

    public MemtableIterator(Memtable memtable) {
        this.cursor = memtable.cursor();
    }

    @Override
    public void seek(byte[] target) {
        cursor.seek(target);
    }

    @Override
    public void seekToFirst() {
        seek(Bytes.EMPTY);
    }

    @Override
    public boolean valid() {
        return cursor.valid();
    }

    @Override
    public void next() {
        cursor.next();
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
