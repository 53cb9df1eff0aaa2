package io.github.flinkstate.disagg.engine.iterator;

import java.io.IOException;

/**
 * A forward cursor over internal entries (key, sequence number, type, value) in increasing key
 * order; sources that hold several versions of a key yield them newest first.
 *
 * <p>Call order: {@code (seek | seekToFirst) (valid [key seq type value] next)* close}. {@code
 * key()} and friends may only be called while {@link #valid()}.
 *
 * <p>Keys: the array {@code key()} returns is not changed afterwards by the iterator (a move
 * returns a new array), and callers do not change it either; so a caller may keep it across moves
 * ({@link MergingIterator} keeps each child's current key).
 *
 * <p>Thread safety: implementations are confined to one thread.
 */
public interface InternalIterator extends AutoCloseable {

    /** Positions at the first entry with key >= target. */
    void seek(byte[] target) throws IOException;

    void seekToFirst() throws IOException;

    boolean valid();

    void next() throws IOException;

    byte[] key();

    long seq();

    byte type();

    byte[] value();

    @Override
    default void close() {}
}
