package io.github.flinkstate.cluster.harness;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.JobID;
import org.apache.flink.client.deployment.StandaloneClusterId;
import org.apache.flink.client.program.PackagedProgram;
import org.apache.flink.client.program.PackagedProgramUtils;
import org.apache.flink.client.program.rest.RestClusterClient;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;

/**
 * Submits the module's job jar to the cluster the way {@code flink run} does: the jar's main class
 * runs in a {@link PackagedProgram} (the jar's own class loader) to build the job graph, the jar is
 * attached to it, and Flink's {@link RestClusterClient} uploads both; the cluster loads the job's
 * classes from the uploaded jar (they are not on its classpath). Job configuration (backend,
 * checkpointing, restore path and claim mode) is the program's configuration, so it travels with
 * the job as the job configuration.
 *
 * <p>Every call waits with a deadline. Thread safety: not thread-safe.
 */
public final class JobSubmitter implements AutoCloseable {

    /** The entry class in the job jar; named, not referenced, so it is loaded from the jar. */
    public static final String JOB_MAIN = "io.github.flinkstate.cluster.job.ClusterStateJob";

    private static final Duration CALL_TIMEOUT = Duration.ofMinutes(2);

    private final FlinkDistribution dist;
    private final RestClusterClient<StandaloneClusterId> client;

    public JobSubmitter(FlinkDistribution dist, FlinkCluster cluster) throws Exception {
        this.dist = dist;
        Configuration conf = new Configuration();
        conf.set(RestOptions.ADDRESS, "127.0.0.1");
        conf.set(RestOptions.PORT, Integer.parseInt(cluster.config().get("rest.port")));
        this.client = new RestClusterClient<>(conf, StandaloneClusterId.getInstance());
    }

    /**
     * Builds the job graph from the job jar with {@code jobConfig} and submits it.
     *
     * @param jobConfig job configuration, including {@code execution.state-recovery.path} and
     *     {@code execution.state-recovery.claim-mode} for a restore
     */
    public JobID submit(Map<String, String> jobConfig, int parallelism, List<String> args)
            throws Exception {
        Configuration conf = Configuration.fromMap(jobConfig);
        PackagedProgram program =
                PackagedProgram.newBuilder()
                        .setJarFile(dist.jobJar().toFile())
                        .setEntryPointClassName(JOB_MAIN)
                        .setArguments(args.toArray(new String[0]))
                        .setConfiguration(conf)
                        .setSavepointRestoreSettings(
                                SavepointRestoreSettings.fromConfiguration(conf))
                        .build();
        try {
            JobGraph graph = PackagedProgramUtils.createJobGraph(program, conf, parallelism, false);
            return client.submitJob(graph).get(CALL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } finally {
            program.close();
        }
    }

    public void cancel(JobID job) throws Exception {
        client.cancel(job).get(CALL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Stop-with-savepoint (no drain) into {@code directory}; returns the savepoint's path. */
    public String stopWithSavepoint(JobID job, String directory, SavepointFormatType format)
            throws Exception {
        return client.stopWithSavepoint(job, false, directory, format)
                .get(CALL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Waits for the job to reach a terminal state and returns it ({@code FINISHED}, ...). */
    public String awaitTermination(JobID job, Duration timeout) throws Exception {
        return client.requestJobResult(job)
                .get(timeout.toMillis(), TimeUnit.MILLISECONDS)
                .getJobStatus()
                .map(Enum::name)
                .orElse("UNKNOWN");
    }

    @Override
    public void close() {
        client.close();
    }
}
