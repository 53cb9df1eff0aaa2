package io.github.flinkstate.cluster.scenario;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Sorts the files a scenario left on HDFS (no retained checkpoint references them) by cause. Two
 * causes lie outside what any backend can do, and are reported but accepted:
 *
 * <ol>
 *   <li>{@link #KILLED}: written by a TaskManager in the {@link #KILL_WINDOW_MILLIS} before it was
 *       killed with {@code kill -9}, for a checkpoint that never completed (RocksDB uploads, DSTL
 *       files, changelog materializations). The killed process cannot delete them and the
 *       JobManager never learns of them.
 *   <li>{@link #MATERIALIZATION}: files under {@code taskowned/} of Flink's changelog backend:
 *       materializations of the delegate (written by Flink's {@code ChangelogKeyedStateBackend},
 *       not by our DSTL) that no completed checkpoint referenced when the job ended.
 * </ol>
 *
 * Everything else is {@link #UNEXPLAINED} and fails the scenario.
 *
 * <p>Stateless and thread-safe.
 */
final class LeftoverCauses {

    static final String KILLED = "written by a killed TaskManager just before its kill";
    static final String MATERIALIZATION =
            "Flink changelog materializations (taskowned/) no completed checkpoint used";
    static final String CLAIMED_THEN_CANCELLED =
            "left by Flink of a claimed checkpoint whose claiming job was cancelled";
    static final String UNEXPLAINED = "unexplained";

    /** A file of a killed TaskManager must have been written this long before the kill. */
    static final long KILL_WINDOW_MILLIS = 10_000;

    private LeftoverCauses() {}

    /**
     * @param leftovers leftover files with their modification times
     * @param killTimes when TaskManagers were killed (ms since the epoch, the HDFS clock)
     * @param changelog whether the scenario ran Flink's changelog backend
     * @param claimedThenCancelled directories (path components) of checkpoints restored in CLAIM
     *     mode by a job that was then cancelled
     * @return the files per cause, causes in a fixed order, empty causes omitted
     */
    static Map<String, List<String>> classify(
            Map<String, Long> leftovers,
            List<Long> killTimes,
            boolean changelog,
            List<String> claimedThenCancelled) {
        Map<String, List<String>> byCause = new LinkedHashMap<>();
        for (Map.Entry<String, Long> f : leftovers.entrySet()) {
            long written = f.getValue();
            String cause;
            if (killTimes.stream()
                    .anyMatch(k -> written <= k && written > k - KILL_WINDOW_MILLIS)) {
                cause = KILLED;
            } else if (changelog && f.getKey().contains("/taskowned/")) {
                cause = MATERIALIZATION;
            } else if (claimedThenCancelled.stream()
                    .anyMatch(d -> f.getKey().startsWith(d + "/"))) {
                cause = CLAIMED_THEN_CANCELLED;
            } else {
                cause = UNEXPLAINED;
            }
            byCause.computeIfAbsent(cause, c -> new ArrayList<>()).add(f.getKey());
        }
        return byCause;
    }
}
