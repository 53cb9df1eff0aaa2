package io.github.flinkstate.cluster.scenario;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Sorts the files a scenario left on HDFS (no retained checkpoint references them) by cause. These
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
 *   <li>{@link #CANCELLED_IN_FLIGHT}: written for a checkpoint that was in flight when its job was
 *       cancelled (between the trigger of the checkpoint the job retained and {@link
 *       #CANCEL_GRACE_MILLIS} after the end of the cancellation; the disaggregated backend's files
 *       of the aborted checkpoint include compaction outputs written soon after that trigger). The
 *       JobManager registers a subtask's shared files on acknowledgement, and on a cancellation
 *       with retained checkpoints it discards shared state only below the lowest retained
 *       checkpoint id, so files registered by a later, aborted checkpoint stay (Flink 2.3, {@code
 *       DefaultCompletedCheckpointStore#shutdown}; RocksDB's {@code shared/} files too). No backend
 *       may delete them itself: it cannot know whether that checkpoint completed.
 *   <li>{@link #FINISHED_IN_FLIGHT}: written for a checkpoint that failed as its bounded job
 *       finished (between the trigger of the job's last completed checkpoint and {@link
 *       #CANCEL_GRACE_MILLIS} after the job ended, in a job whose latest checkpoint failed after
 *       that completed one). A task that aligned the barrier of that checkpoint (a finished input
 *       counts as aligned) acknowledges it while the job ends; an acknowledgement the JobManager
 *       receives only after its checkpoint coordinator shut down is dropped (neither registered nor
 *       discarded), which leaves the files the checkpoint named first to nobody: the TaskManager
 *       cannot know whether the JobManager registered them. Seen once for the disaggregated backend
 *       (a compaction output written after the last completed checkpoint's barrier); RocksDB's
 *       {@code shared/} uploads would stay the same way. Judged by modification time alone: a real
 *       leak of a file written in that window is accepted too.
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
    static final String CANCELLED_IN_FLIGHT =
            "registered by a checkpoint in flight when its job was cancelled (Flink keeps them)";
    static final String FINISHED_IN_FLIGHT =
            "written for a checkpoint that failed as its bounded job finished";
    static final String UNEXPLAINED = "unexplained";

    /** A file of a killed TaskManager must have been written at most this long before the kill. */
    static final long KILL_WINDOW_MILLIS = 10_000;

    /**
     * A file of a checkpoint in flight at a cancellation may be written until this long after the
     * job reached its terminal state: an upload gets its modification time when it is closed, and
     * uploads still running when the tasks were cancelled close after that (seen: 3-9 ms).
     */
    static final long CANCEL_GRACE_MILLIS = 2_000;

    private LeftoverCauses() {}

    /**
     * @param leftovers leftover files with their modification times
     * @param kills per {@code kill -9}: {kill time, time the job ran again} (ms since the epoch,
     *     the HDFS clock)
     * @param cancels per cancellation with retained checkpoints: {retained checkpoint triggered,
     *     job terminated} (ms since the epoch)
     * @param changelog whether the scenario ran Flink's changelog backend
     * @param claimedThenCancelled directories (path components) of checkpoints restored in CLAIM
     *     mode by a job that was then cancelled
     * @return the files per cause, causes in a fixed order, empty causes omitted
     */
    static Map<String, List<String>> classify(
            Map<String, Long> leftovers,
            List<long[]> kills,
            List<long[]> cancels,
            boolean changelog,
            List<String> claimedThenCancelled) {
        return classify(leftovers, kills, cancels, changelog, claimedThenCancelled, List.of());
    }

    /**
     * As above, with {@code finishes}: per bounded job that finished while its latest checkpoint
     * failed: {last completed checkpoint triggered, job terminated} (ms since the epoch).
     */
    static Map<String, List<String>> classify(
            Map<String, Long> leftovers,
            List<long[]> kills,
            List<long[]> cancels,
            boolean changelog,
            List<String> claimedThenCancelled,
            List<long[]> finishes) {
        Map<String, List<String>> byCause = new LinkedHashMap<>();
        for (Map.Entry<String, Long> f : leftovers.entrySet()) {
            long written = f.getValue();
            String cause;
            if (kills.stream()
                    .anyMatch(k -> written > k[0] - KILL_WINDOW_MILLIS && written <= k[1])) {
                cause = KILLED;
            } else if (cancels.stream()
                    .anyMatch(c -> written >= c[0] && written <= c[1] + CANCEL_GRACE_MILLIS)) {
                cause = CANCELLED_IN_FLIGHT;
            } else if (changelog && f.getKey().contains("/taskowned/")) {
                cause = MATERIALIZATION;
            } else if (claimedThenCancelled.stream()
                    .anyMatch(d -> f.getKey().startsWith(d + "/"))) {
                cause = CLAIMED_THEN_CANCELLED;
            } else if (finishes.stream()
                    .anyMatch(c -> written >= c[0] && written <= c[1] + CANCEL_GRACE_MILLIS)) {
                // last: a more specific cause explains a file better
                cause = FINISHED_IN_FLIGHT;
            } else {
                cause = UNEXPLAINED;
            }
            byCause.computeIfAbsent(cause, c -> new ArrayList<>()).add(f.getKey());
        }
        return byCause;
    }
}
