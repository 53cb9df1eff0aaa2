package io.github.flinkstate.disagg.engine.cache;

import io.github.flinkstate.disagg.engine.key.EntryType;
import io.github.flinkstate.disagg.engine.key.Versioned;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * The in-memory form of one {@link RowCache} row: its key and what the files show of it in a single
 * array, so a row costs one object instead of three (key, {@link Versioned}, value).
 *
 * <p>Layout (in memory only, never written to a file): {@code key, value, u64 seq, u8 type, u32
 * keyLength}, big-endian; the value is absent for {@link RowCache#ABSENT} (type {@link
 * EntryType#DELETE}), which is the only non-put row the cache stores. The trailer is at the end so
 * the key starts at index 0 and compares in place.
 *
 * <p>Thread safety: stateless; a record is never changed once built.
 */
final class RowRecord {

    /** Bytes after the key and value: seq, type, key length. */
    static final int TRAILER = 8 + 1 + 4;

    private static final VarHandle LONG =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle INT =
            MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);

    private RowRecord() {}

    /** The length of the record of {@code key} and {@code row}. */
    static int length(byte[] key, Versioned row) {
        byte[] v = value(row);
        return key.length + (v == null ? 0 : v.length) + TRAILER;
    }

    /** A new record of {@code key} and {@code row} (a put, or {@link RowCache#ABSENT}). */
    static byte[] encode(byte[] key, Versioned row) {
        byte[] v = value(row);
        byte[] r = new byte[length(key, row)];
        System.arraycopy(key, 0, r, 0, key.length);
        int at = key.length;
        if (v != null) {
            System.arraycopy(v, 0, r, at, v.length);
            at += v.length;
        }
        LONG.set(r, at, row.seq());
        r[at + 8] = row.type();
        INT.set(r, at + 9, key.length);
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
        int seqAt = record.length - TRAILER;
        byte type = record[seqAt + 8];
        if (type != EntryType.PUT) {
            return RowCache.ABSENT;
        }
        long seq = (long) LONG.get(record, seqAt);
        return new Versioned(seq, type, Arrays.copyOfRange(record, keyLength(record), seqAt));
    }

    /** The value a record keeps of {@code row}: a put's, none for anything else. */
    private static byte[] value(Versioned row) {
        return row.type() == EntryType.PUT ? row.value() : null;
    }

    private static int keyLength(byte[] record) {
        return (int) INT.get(record, record.length - 4);
    }
}
