package io.github.flinkstate.disagg.engine.iterator;

import io.github.flinkstate.disagg.engine.key.Bytes;
import io.github.flinkstate.disagg.engine.key.Versioned;
import io.github.flinkstate.disagg.engine.memtable.Memtable;
import java.util.Iterator;
import java.util.Map;

/**
 * Iterates a {@link Memtable}; weakly consistent with concurrent writes.
 *
 * <p>Thread safety: confined to one thread.
 */
public final class MemtableIterator implements InternalIterator {

    private final Memtable memtable;
    private Iterator<Map.Entry<byte[], Versioned>> it;
    private Map.Entry<byte[], Versioned> current;

    public MemtableIterator(Memtable memtable) {
        this.memtable = memtable;
    }

    @Override
    public void seek(byte[] target) {
        it = memtable.rangeOf(target, null).entrySet().iterator();
        next();
    }

    @Override
    public void seekToFirst() {
        seek(Bytes.EMPTY);
    }

    @Override
    public boolean valid() {
        return current != null;
    }

    @Override
    public void next() {
        current = it.hasNext() ? it.next() : null;
    }

    @Override
    public byte[] key() {
        return current.getKey();
    }

    @Override
    public long seq() {
        return current.getValue().seq();
    }

    @Override
    public byte type() {
        return current.getValue().type();
    }

    @Override
    public byte[] value() {
        return current.getValue().value();
    }
}
