package io.github.flinkstate.benchmarks.jmh;

import java.util.SplittableRandom;

/**
 * The workload shape of Apache Flink's state benchmarks (apache/flink-benchmarks, package {@code
 * org.apache.flink.state.benchmark}): {@code Long} keys, {@code Long} values, lists of {@code
 * Long}, maps {@code Long -> Double} with 10 user keys, 500,000 keys written at set-up and 500,000
 * new keys for the "add" operations, 100-element lists for {@code listAddAll}.
 *
 * <p>One deliberate difference: the key of each operation is drawn uniformly at random (from a
 * precomputed, seeded sequence) instead of walking a shuffled permutation in a cycle. On HashMap
 * and RocksDB both are random accesses over the same keys; for an LRU cache a cycle over N keys
 * never hits when the cache is smaller than N, so only uniform draws give the intended 0% / 50% /
 * 100% hit ratios of {@link BenchmarkBackend}.
 *
 * <p>Not thread-safe: one instance per benchmark thread.
 */
public final class StateWorkload {

    /** Keys written at set-up (flink-benchmarks' SETUP_KEY_COUNT). */
    public static final int SETUP_KEY_COUNT = 500_000;

    /** User keys per map (flink-benchmarks' MAP_KEY_COUNT). */
    public static final int MAP_KEY_COUNT = 10;

    /** Elements of the list added by {@code listAddAll} (flink-benchmarks' LIST_VALUE_COUNT). */
    public static final int LIST_VALUE_COUNT = 100;

    private static final int SEQUENCE_LENGTH = 1 << 20;
    private static final int MASK = SEQUENCE_LENGTH - 1;

    private final int keyCount;
    private final int[] draws = new int[SEQUENCE_LENGTH];

    /**
     * Keys boxed once, as flink-benchmarks keeps them in lists: no boxing inside the measurement.
     */
    private final Long[] boxedKeys;

    private final long[] mapKeys = new long[MAP_KEY_COUNT];
    private final Long[] boxedMapKeys = new Long[MAP_KEY_COUNT];
    private int position;
    private long nextValue;

    /**
     * @param keyCount keys written at set-up; keys {@code [0, keyCount)} are "set-up keys" and
     *     {@code [keyCount, 2 * keyCount)} are "new keys"
     */
    public StateWorkload(int keyCount, long seed) {
        if (keyCount <= 0) {
            throw new IllegalArgumentException("keyCount must be positive: " + keyCount);
        }
        this.keyCount = keyCount;
        this.boxedKeys = new Long[2 * keyCount];
        for (int i = 0; i < boxedKeys.length; i++) {
            boxedKeys[i] = (long) i;
        }
        SplittableRandom random = new SplittableRandom(seed);
        for (int i = 0; i < SEQUENCE_LENGTH; i++) {
            draws[i] = random.nextInt(keyCount);
        }
        for (int i = 0; i < MAP_KEY_COUNT; i++) {
            mapKeys[i] = i;
        }
        for (int i = MAP_KEY_COUNT - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            long t = mapKeys[i];
            mapKeys[i] = mapKeys[j];
            mapKeys[j] = t;
        }
        for (int i = 0; i < MAP_KEY_COUNT; i++) {
            boxedMapKeys[i] = mapKeys[i];
        }
        this.nextValue = random.nextLong();
    }

    public int keyCount() {
        return keyCount;
    }

    /** Advances to the next operation; the accessors below then describe it. */
    public void next() {
        position++;
        nextValue++;
    }

    /** A key that was written at set-up. */
    public Long setUpKey() {
        return boxedKeys[draws[position & MASK]];
    }

    /** A key that was not written at set-up (written by earlier "add" operations, or fresh). */
    public Long newKey() {
        return boxedKeys[keyCount + draws[position & MASK]];
    }

    /** The boxed key {@code key}, for {@code 0 <= key < 2 * keyCount}. */
    public Long key(long key) {
        return boxedKeys[(int) key];
    }

    /** {@code count} distinct set-up keys spread over the key space, for verification reads. */
    public long[] sampleSetUpKeys(int count) {
        int n = Math.min(count, keyCount);
        long[] sample = new long[n];
        long step = Math.max(1, keyCount / n);
        for (int i = 0; i < n; i++) {
            sample[i] = (i * step + 7) % keyCount;
        }
        return sample;
    }

    /** A user key of the map, one of {@link #MAP_KEY_COUNT}. */
    public Long mapKey() {
        return boxedMapKeys[position % MAP_KEY_COUNT];
    }

    /** A value that differs from operation to operation. */
    public long value() {
        return nextValue;
    }

    /** The value written for {@code key} at set-up: a pure function, so it can be checked. */
    public static long setUpValue(long key) {
        return key * 0x9E3779B97F4A7C15L + 1;
    }

    /** The user keys of every map written at set-up. */
    public long[] allMapKeys() {
        return mapKeys.clone();
    }

    /** The value of {@code mapKey} written at set-up. */
    public static double setUpMapValue(long key, long mapKey) {
        return (double) (key * MAP_KEY_COUNT + mapKey);
    }
}
