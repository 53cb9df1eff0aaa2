package io.github.flinkstate.disagg.engine.key;

/**
 * Kinds of internal entries. The byte codes are persisted in SST files and frozen (see
 * docs/format/disagg-sst.md); never renumber them.
 */
public final class EntryType {
    /** A value. */
    public static final byte PUT = 1;

    /** A point delete (tombstone) of one key. */
    public static final byte DELETE = 2;

    private EntryType() {}

    public static boolean isValid(byte t) {
        return t == PUT || t == DELETE;
    }
}
