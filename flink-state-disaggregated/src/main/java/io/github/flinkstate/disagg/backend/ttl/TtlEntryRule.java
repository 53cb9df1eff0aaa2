package io.github.flinkstate.disagg.backend.ttl;

import org.apache.flink.runtime.state.ttl.TtlUtils;

/**
 * How to tell whether one stored entry of a TTL state has expired: where the last-access timestamp
 * of Flink's {@code TtlValue} sits in the engine value, and the state's time-to-live.
 *
 * <p>Stored values of TTL states (written by Flink's TTL wrappers through this backend's states):
 *
 * <ul>
 *   <li>value, reducing, aggregating state: the {@code TtlSerializer} bytes, i.e. the timestamp (8
 *       bytes, big-endian) followed by the user value; offset 0;
 *   <li>list state: one engine entry per element, each the {@code TtlSerializer} bytes of the
 *       element; offset 0 (elements expire one by one);
 *   <li>map state: one engine entry per user key; a null flag byte (0: a value follows), then the
 *       {@code TtlSerializer} bytes; offset 1.
 * </ul>
 *
 * <p>Thread safety: immutable.
 *
 * @param timestampOffset where the 8-byte timestamp starts in the value
 * @param nullFlag whether the byte before the timestamp is a null flag (map values)
 * @param ttlMillis the state's time-to-live
 * @param queryTimeAfterNumEntries how many entries a run judges with one reading of the clock
 * @param periodicCompactionMillis the state's own periodic compaction time ({@code
 *     cleanupInRocksdbCompactFilter(n, time)}; 0 = off), or -1 to use the backend's option
 */
record TtlEntryRule(
        int timestampOffset,
        boolean nullFlag,
        long ttlMillis,
        long queryTimeAfterNumEntries,
        long periodicCompactionMillis) {

    /** True when {@code value} holds a timestamp that has expired at {@code now}. */
    boolean expired(byte[] value, long now) {
        int at = timestampOffset;
        if (value.length < at + Long.BYTES) {
            return false; // not a TTL value (cannot happen for a registered TTL state): keep
        }
        if (nullFlag && value[0] != 0) {
            return false; // a null map value carries no timestamp: keep
        }
        long ts = 0;
        for (int i = 0; i < Long.BYTES; i++) {
            ts = (ts << 8) | (value[at + i] & 0xFF);
        }
        return TtlUtils.expired(ts, ttlMillis, now);
    }
}
