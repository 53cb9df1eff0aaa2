package io.github.flinkstate.cluster.scenario;

import io.github.flinkstate.cluster.harness.HdfsListing;
import io.github.flinkstate.cluster.job.JobInput;
import io.github.flinkstate.testing.job.ExpectedResults;
import io.github.flinkstate.testing.job.KeySummary;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * The exactly-once verdict of a cluster run: the result lines the job wrote to HDFS against the
 * lines computed from the input alone: the job kit's {@link KeySummary} per key ({@link
 * ExpectedResults}, compared by its text because the job ran in other JVMs), one session per key
 * per block with its start, count and sum, one TTL count and sum per key. A record lost or applied
 * twice changes a count or a sum; a line written twice by a re-run sink attempt is accepted only if
 * identical.
 *
 * <p>Stateless and thread-safe.
 */
final class ClusterResults {

    private ClusterResults() {}

    /** The lines a correct run writes, each exactly once. */
    static Map<String, Integer> expected(JobInput input) {
        Map<String, long[]> sessions = new HashMap<>(); // key,block -> start,count,sum
        long[][] ttl = new long[input.keys()][2];
        for (long r = 0; r < input.records(); r++) {
            final long x = r;
            int key = (int) input.key(x);
            long[] s =
                    sessions.computeIfAbsent(
                            key + "," + (x / input.block()),
                            k -> new long[] {input.eventTime(x), 0, 0});
            s[1]++;
            s[2] += x;
            ttl[key][0]++;
            ttl[key][1] += x;
        }
        Map<String, Integer> lines = new HashMap<>();
        for (KeySummary summary :
                ExpectedResults.compute(input.records(), input.keyFunction()).values()) {
            lines.put(summary.toString(), 1);
        }
        for (Map.Entry<String, long[]> e : sessions.entrySet()) {
            String key = e.getKey().substring(0, e.getKey().indexOf(','));
            long[] s = e.getValue();
            lines.put("session," + key + "," + s[0] + "," + s[1] + "," + s[2], 1);
        }
        for (int k = 0; k < input.keys(); k++) {
            if (ttl[k][0] > 0) {
                lines.put("ttl," + k + "," + ttl[k][0] + "," + ttl[k][1], 1);
            }
        }
        return lines;
    }

    static Verdict check(FileSystem fs, String resultsDir, JobInput input) throws IOException {
        Map<String, Integer> found = new HashMap<>();
        for (String file : HdfsListing.files(fs, resultsDir)) {
            if (new Path(file).getName().startsWith(".")) {
                continue; // never renamed: an attempt that died while writing
            }
            try (InputStream in = fs.open(new Path(file))) {
                for (String line :
                        new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                    if (!line.isBlank()) {
                        found.merge(line, 1, Integer::sum);
                    }
                }
            }
        }
        Map<String, Integer> expected = expected(input);
        List<String> problems = new ArrayList<>();
        int duplicates = 0;
        for (String line : expected.keySet()) {
            if (!found.containsKey(line)) {
                problems.add("missing: " + line);
            }
        }
        for (Map.Entry<String, Integer> e : found.entrySet()) {
            if (!expected.containsKey(e.getKey())) {
                problems.add("wrong: " + e.getKey());
            } else if (e.getValue() > 1) {
                duplicates += e.getValue() - 1;
            }
        }
        problems.sort(null);
        return new Verdict(problems.isEmpty(), expected.size(), found.size(), duplicates, problems);
    }

    /**
     * @param exact every expected line was written and no other
     * @param expected number of distinct expected lines
     * @param found distinct lines written
     * @param duplicates identical lines written more than once (sink re-runs)
     * @param problems missing and wrong lines, sorted
     */
    record Verdict(boolean exact, int expected, int found, int duplicates, List<String> problems) {
        String summary() {
            return exact
                    ? "exactly-once: yes ("
                            + expected
                            + " results exact"
                            + (duplicates > 0 ? ", " + duplicates + " identical duplicates" : "")
                            + ")"
                    : "exactly-once: NO ("
                            + problems.size()
                            + " problems of "
                            + expected
                            + ", first: "
                            + problems.subList(0, Math.min(5, problems.size()))
                            + ")";
        }
    }
}
