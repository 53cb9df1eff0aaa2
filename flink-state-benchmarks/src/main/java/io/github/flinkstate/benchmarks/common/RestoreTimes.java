package io.github.flinkstate.benchmarks.common;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.runtime.execution.ExecutionState;
import org.apache.flink.runtime.executiongraph.AccessExecution;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionJobVertex;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;

/**
 * The restore-time measurement shared by the scenarios: the time a subtask spent in Flink's
 * INITIALIZING state, from the INITIALIZING to the RUNNING timestamp of its current execution
 * attempt in the execution graph. That is where keyed state (changelog included) is downloaded and
 * restored, so it is FLIP-447's "restore time" of the subtask; a job's restore time is the maximum
 * over its subtasks. Stateless.
 */
public final class RestoreTimes {

    private RestoreTimes() {}

    /** The restore time of one execution attempt, or -1 if it has not reached RUNNING. */
    public static long initializingMillis(AccessExecution attempt) {
        long init = attempt.getStateTimestamp(ExecutionState.INITIALIZING);
        long running = attempt.getStateTimestamp(ExecutionState.RUNNING);
        return init > 0 && running >= init ? running - init : -1;
    }

    /**
     * Per subtask of {@code vertex}, in subtask index order.
     *
     * @throws IllegalStateException if a subtask has no INITIALIZING to RUNNING interval
     */
    public static List<Long> perSubtask(AccessExecutionJobVertex vertex, String what) {
        Long[] millis = new Long[vertex.getParallelism()];
        for (AccessExecutionVertex subtask : vertex.getTaskVertices()) {
            AccessExecution e = subtask.getCurrentExecutionAttempt();
            long ms = initializingMillis(e);
            if (ms < 0) {
                throw new IllegalStateException(
                        what
                                + ": subtask "
                                + subtask.getParallelSubtaskIndex()
                                + " of "
                                + vertex.getName()
                                + " has no INITIALIZING -> RUNNING timestamps ("
                                + e.getStateTimestamp(ExecutionState.INITIALIZING)
                                + ", "
                                + e.getStateTimestamp(ExecutionState.RUNNING)
                                + ")");
            }
            millis[subtask.getParallelSubtaskIndex()] = ms;
        }
        return List.of(millis);
    }

    /** The longest restore time over every subtask of the job (0 if none has run yet). */
    public static long maxOverJob(AccessExecutionGraph graph) {
        long max = 0;
        for (AccessExecutionVertex v : graph.getAllExecutionVertices()) {
            max = Math.max(max, initializingMillis(v.getCurrentExecutionAttempt()));
        }
        return max;
    }

    /** Whether every subtask of the job is RUNNING (its restore is over). */
    public static boolean allRunning(AccessExecutionGraph graph) {
        List<AccessExecutionVertex> vertices = new ArrayList<>();
        graph.getAllExecutionVertices().forEach(vertices::add);
        return !vertices.isEmpty()
                && vertices.stream()
                        .allMatch(
                                v ->
                                        v.getCurrentExecutionAttempt().getState()
                                                == ExecutionState.RUNNING);
    }
}
