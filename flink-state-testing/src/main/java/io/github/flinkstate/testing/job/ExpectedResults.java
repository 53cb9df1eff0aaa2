package io.github.flinkstate.testing.job;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The {@link KeySummary} of every key, computed from the input alone ({@code 0..N-1} and the key
 * function) without Flink: what a run that processed every record exactly once must report.
 */
public final class ExpectedResults {

    private ExpectedResults() {}

    public static Map<Long, KeySummary> compute(long records, KeyFunction keys) {
        return compute(records, keys, false);
    }

    /** As {@link #compute(long, KeyFunction)}; with {@code countOnly}, only the counts are set. */
    public static Map<Long, KeySummary> compute(long records, KeyFunction keys, boolean countOnly) {
        if (countOnly) {
            Map<Long, Long> counts = new HashMap<>();
            for (long x = 0; x < records; x++) {
                counts.merge(keys.key(x), 1L, Long::sum);
            }
            Map<Long, KeySummary> expected = new HashMap<>();
            counts.forEach((k, c) -> expected.put(k, KeySummary.countOnly(k, c)));
            return expected;
        }
        Map<Long, long[]> scalars = new HashMap<>(); // count, sum, max, residue counts 0..3
        Map<Long, List<Long>> samples = new HashMap<>();
        for (long x = 0; x < records; x++) {
            long key = keys.key(x);
            long[] s =
                    scalars.computeIfAbsent(
                            key, k -> new long[] {0, 0, Long.MIN_VALUE, 0, 0, 0, 0});
            s[0]++;
            s[1] += x;
            s[2] = Math.max(s[2], StateKeepingFunction.maxInput(x));
            s[3 + (int) StateKeepingFunction.mapKey(x)]++;
            if (StateKeepingFunction.sampled(x)) {
                samples.computeIfAbsent(key, k -> new ArrayList<>()).add(x);
            }
        }
        Map<Long, KeySummary> expected = new HashMap<>();
        for (Map.Entry<Long, long[]> e : scalars.entrySet()) {
            long[] s = e.getValue();
            TreeMap<Long, Long> residues = new TreeMap<>();
            for (int r = 0; r < 4; r++) {
                if (s[3 + r] > 0) {
                    residues.put((long) r, s[3 + r]);
                }
            }
            List<Long> sample = samples.getOrDefault(e.getKey(), List.of());
            expected.put(
                    e.getKey(),
                    new KeySummary(e.getKey(), s[0], s[1], s[2], List.copyOf(sample), residues));
        }
        return expected;
    }
}
