package io.github.flinkstate.testing.job;

import java.io.Serializable;

/** Maps a record {@code 0..N-1} of the sequence source to its key. Must be deterministic. */
@FunctionalInterface
public interface KeyFunction extends Serializable {

    long key(long record);

    /** {@code record % keys}: every key gets about the same number of records, round-robin. */
    static KeyFunction modulo(int keys) {
        if (keys <= 0) {
            throw new IllegalArgumentException("keys must be positive: " + keys);
        }
        return record -> record % keys;
    }

    /**
     * The FLIP-325 benchmark's key pattern: 1000 keys, 500 of them active in each run of 1000
     * records ({@code (x % 500) + 500 * ((x / 1000) % 2)}), so half of the keys are cold at any
     * time.
     */
    static KeyFunction flip325() {
        return record -> (record % 500) + 500 * ((record / 1000) % 2);
    }
}
