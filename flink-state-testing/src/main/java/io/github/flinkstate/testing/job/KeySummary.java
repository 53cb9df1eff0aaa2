package io.github.flinkstate.testing.job;

import java.io.Serializable;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What {@link StateKeepingFunction} holds for one key at the end of the input: one field per kind
 * of keyed state. Two runs that processed the same records exactly once have equal summaries,
 * whatever the order of the records. Immutable.
 *
 * @param key the key
 * @param count value state: records of the key
 * @param sum reducing state: sum of the records
 * @param max aggregating state: largest record
 * @param sampled list state: the records picked by {@link StateKeepingFunction#sampled(long)},
 *     sorted
 * @param residues map state: records per {@code record % 4}
 */
public record KeySummary(
        long key,
        long count,
        long sum,
        long max,
        List<Long> sampled,
        SortedMap<Long, Long> residues)
        implements Serializable {

    /** The summary of a count-only run: the other states are empty. */
    public static KeySummary countOnly(long key, long count) {
        return new KeySummary(key, count, 0, Long.MIN_VALUE, List.of(), new TreeMap<>());
    }
}
