package io.github.flinkstate.benchmarks.common;

import org.apache.flink.api.common.JobID;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;

/**
 * Turns a job that ended while a scenario still waited on it into an exception that carries the
 * job's own failure cause (a scenario log without it says only "FAILED"). Stateless.
 */
public final class JobEnds {

    private JobEnds() {}

    /**
     * An {@link IllegalStateException} with {@code message}, caused by the failure {@code job}
     * ended with, if any; the job must have reached a globally terminal state.
     */
    public static IllegalStateException unexpected(MiniCluster cluster, JobID job, String message)
            throws Exception {
        JobResult result = cluster.requestJobResult(job).get();
        Throwable cause =
                result.getSerializedThrowable()
                        .map(t -> t.deserializeError(JobEnds.class.getClassLoader()))
                        .orElse(null);
        return new IllegalStateException(message, cause);
    }
}
