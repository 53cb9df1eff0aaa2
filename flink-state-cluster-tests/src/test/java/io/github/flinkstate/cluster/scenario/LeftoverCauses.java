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
 *   <li>{@link #KILLED}: written for a checkpoint that a {@code kill -9} aborted: by the killed
 *       TaskManager in the {@link #KILL_WINDOW_MILLIS} before its kill, or by the surviving ones
 *       until the job ran again (their in-flight uploads finish while their tasks are cancelled).
 *       RocksDB uploads, DSTL files, changelog materializations: the killed process cannot delete
 *       them, and no acknowledgement tells the JobManager about them.
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

    static final String KILLED = "written for a checkpoint aborted by a kill -9";
    static final String MATERIALIZATION =
            "Flink changelog materializations (taskowned/) no completed checkpoint used";
    static final String CLAIMED_THEN_CANCELLED =
            "left by Flink of a claimed checkpoint whose claiming job was cancelled";
    static final String UNEXPLAINED = "unexplained";

    /** A file of a killed TaskManager must have been written at most this long before the kill. */
    static final long KILL_WINDOW_MILLIS = 10_000;

    private LeftoverCauses() {}

    /**
     * @param leftovers leftover files with their modification times
     * @param kills per {@code kill -9}: {kill time, time the job ran again} (ms since the epoch,
     *     the HDFS clock)
     * @param changelog whether the scenario ran Flink's changelog backend
     * @param claimedThenCancelled directories (path components) of checkpoints restored in CLAIM
     *     mode by a job that was then cancelled
     * @return the files per cause, causes in a fixed order, empty causes omitted
     */
    static Map<String, List<String>> classify(
            Map<String, Long> leftovers,
            List<long[]> kills,
            boolean changelog,
            List<String> claimedThenCancelled) {
        Map<String, List<String>> byCause = new LinkedHashMap<>();
        for (Map.Entry<String, Long> f : leftovers.entrySet()) {
            long written = f.getValue();
            String cause;
            if (kills.stream()
                    .anyMatch(k -> written > k[0] - KILL_WINDOW_MILLIS && written <= k[1])) {
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
