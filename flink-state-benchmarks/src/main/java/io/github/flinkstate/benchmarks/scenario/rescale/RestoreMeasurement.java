package io.github.flinkstate.benchmarks.scenario.rescale;

import java.util.List;
import java.util.Map;

/**
 * What one verify job measured while restoring a {@link RetainedCheckpoint}. Immutable.
 *
 * @param subtaskRestoreMs per subtask of the keyed operator (index order): the time it spent in
 *     Flink's INITIALIZING state (INITIALIZING to RUNNING timestamps in the execution graph), which
 *     is where keyed state is downloaded and restored
 * @param probesPerSubtask keys that each subtask verified (index order)
 * @param keysVerified keys found with the right value (all keys, unless the read was stopped at its
 *     deadline: a lost or wrong key fails the verify job before a measurement is made)
 * @param readAllMs time from the first to the last probe: one point read of every key right after
 *     the restore (not part of the restore time; shows the state the restore left behind)
 * @param readComplete false when the read of every key was stopped at the scenario's read deadline
 *     ({@code keysVerified} keys were read, all right); the restore time is measured either way
 * @param flinkSpan numeric attributes of Flink's {@code JobInitialization} span for this restore
 *     (max/sum over all subtasks of the job); empty when Flink did not emit it in time
 */
public record RestoreMeasurement(
        List<Long> subtaskRestoreMs,
        List<Long> probesPerSubtask,
        long keysVerified,
        long readAllMs,
        boolean readComplete,
        Map<String, Long> flinkSpan) {

    public RestoreMeasurement {
        subtaskRestoreMs = List.copyOf(subtaskRestoreMs);
        probesPerSubtask = List.copyOf(probesPerSubtask);
        flinkSpan = Map.copyOf(flinkSpan);
    }

    /** The longest subtask restore, as in FLIP-447's "max restore time". */
    public long maxRestoreMs() {
        return subtaskRestoreMs.stream().mapToLong(Long::longValue).max().orElse(0);
    }

    /** Bytes restored over all subtasks by Flink's count (sum over locations), or -1 if unknown. */
    public long restoredBytes() {
        long sum = -1;
        for (Map.Entry<String, Long> e : flinkSpan.entrySet()) {
            if (e.getKey().startsWith("sumRestoredStateSizeBytes")) {
                sum = Math.max(sum, 0) + e.getValue();
            }
        }
        return sum;
    }
}
