package io.github.flinkstate.disagg.engine.cache;

import io.github.flinkstate.disagg.engine.key.EntryType;
import io.github.flinkstate.disagg.engine.key.Versioned;
import java.util.Arrays;

/**
 * The in-memory form of one {@link RowCache} row: its key and what the files show of it in a single
 * array, so a row costs one object instead of three (key, {@link Versioned}, value).
 *
 * <p>Layout (in memory only, never written to a file): {@code key, value, u64 seq, u8 type, u32
 * keyLength}; the value is absent for {@link RowCache#ABSENT} (type {@link EntryType#DELETE}),
 * which is the only non-put row the cache stores. The trailer is at the end so the key starts at
 * index 0 and compares in place.
 *
 * <p>Thread safety: stateless; a record is never changed once built.
 */
final class RowRecord {

    /** Bytes after the key and value: seq, type, key length. */
    static final int TRAILER = 8 + 1 + 4;

    private RowRecord() {}

    /** The length of the record of {@code key} and {@code row}. */
    static int length(byte[] key, Versioned row) {
        byte[] v = row.type() == EntryType.PUT ? row.value() : null;
        return key.length + (v == null ? 0 : v.length) + TRAILER;
    }

    /** A new record of {@code key} and {@code row} (a put, or {@link RowCache#ABSENT}). */
    static byte[] encode(byte[] key, Versioned row) {
        byte[] v = row.type() == EntryType.PUT ? row.value() : null;
        int valueLength = v == null ? 0 : v.length;
        byte[] r = new byte[key.length + valueLength + TRAILER];
        System.arraycopy(key, 0, r, 0, key.length);
        if (v != null) {
            System.arraycopy(v, 0, r, key.length, valueLength);
        }
        int at = key.length + valueLength;
        long seq = row.seq();
        for (int i = 7; i >= 0; i--) {
            r[at++] = (byte) (seq >>> (8 * i));
        }
        r[at++] = row.type();
        int n = key.length;
        r[at++] = (byte) (n >>> 24);
        r[at++] = (byte) (n >>> 16);
        r[at++] = (byte) (n >>> 8);
        r[at] = (byte) n;
        return r;
    }

    /** Whether {@code record} is the row of exactly {@code key}. */
    static boolean hasKey(byte[] record, byte[] key) {
        int n = keyLength(record);
        return n == key.length && Arrays.equals(record, 0, n, key, 0, n);
    }

    /** A copy of the record's key. */
    static byte[] key(byte[] record) {
        return Arrays.copyOf(record, keyLength(record));
    }

    /** The row the record holds: {@link RowCache#ABSENT}, or a put with a copy of its value. */
    static Versioned decode(byte[] record) {
        int typeAt = record.length - 5;
        byte type = record[typeAt];
        if (type != EntryType.PUT) {
            return RowCache.ABSENT;
        }
        int seqAt = typeAt - 8;
        long seq = 0;
        for (int i = 0; i < 8; i++) {
            seq = (seq << 8) | (record[seqAt + i] & 0xFF);
        }
        return new Versioned(seq, type, Arrays.copyOfRange(record, keyLength(record), seqAt));
    }

    private static int keyLength(byte[] record) {
        int at = record.length - 4;
        return (record[at] & 0xFF) << 24
                | (record[at + 1] & 0xFF) << 16
                | (record[at + 2] & 0xFF) << 8
                | (record[at + 3] & 0xFF);
    }
}
