package io.github.flinkstate.cluster.job;

import io.github.flinkstate.testing.job.KeyFunction;

/**
 * The deterministic input of {@link ClusterStateJob}: records {@code 0..N-1}, their keys and their
 * event times. Everything the results are checked against is computed from these functions and the
 * job's parameters alone, never from what the job reported.
 *
 * <p>Event time: record {@code x} is at {@code x * STEP + (x / block) * BLOCK_PAUSE}. Records of
 * one key are {@code keys * STEP} apart inside a block of {@code block} records, which is less than
 * the session gap, so each record merges into its key's open session; between blocks the pause is
 * longer than the gap, so every key has exactly one session per block.
 *
 * <p>Immutable and thread-safe.
 */
public final class JobInput implements java.io.Serializable {

    private static final long serialVersionUID = 1L;

    /** Milliseconds between consecutive records. */
    public static final long STEP = 1;

    private final long records;
    private final int keys;
    private final long block;

    public JobInput(long records, int keys, long block) {
        if (records <= 0 || keys <= 0 || block < keys) {
            throw new IllegalArgumentException(
                    "need records > 0, keys > 0 and block >= keys: "
                            + records
                            + ", "
                            + keys
                            + ", "
                            + block);
        }
        this.records = records;
        this.keys = keys;
        this.block = block;
    }

    public long records() {
        return records;
    }

    public int keys() {
        return keys;
    }

    public long block() {
        return block;
    }

    /** The key of a record: {@code KeyFunction.modulo(keys)} of the job kit. */
    public KeyFunction keyFunction() {
        return KeyFunction.modulo(keys);
    }

    public long key(long record) {
        return record % keys;
    }

    /** Session gap: twice the distance of two records of one key. */
    public long sessionGapMillis() {
        return 2L * keys * STEP;
    }

    /** Pause between blocks: five session gaps. */
    public long blockPauseMillis() {
        return 5 * sessionGapMillis();
    }

    public long eventTime(long record) {
        return record * STEP + (record / block) * blockPauseMillis();
    }
}
