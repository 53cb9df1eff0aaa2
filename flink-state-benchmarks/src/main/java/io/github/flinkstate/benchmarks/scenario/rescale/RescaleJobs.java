package io.github.flinkstate.benchmarks.scenario.rescale;

import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

/**
 * Builds the scenario's two jobs. Both key a stream of {@code Long} keys into one keyed operator
 * with uid {@link #KEYED_UID} and max parallelism {@link #MAX_PARALLELISM}, so the verify job
 * restores the load job's keyed state at any parallelism:
 *
 * <pre>
 *   load:   sequence 0..inf (p=1) -> FirstKeys (p=1) -> keyBy -> WriteValues  (p=from) -> discard
 *   verify: sequence 0..inf (p=1) -> FirstKeys (p=1) -> keyBy -> VerifyValues (p=to)   -> discard
 * </pre>
 *
 * Neither job ends by itself: the driver cancels it. For the verify job this matters in CLAIM mode:
 * a job that reaches FINISHED discards the checkpoint it claimed (a retained checkpoint is only
 * kept on cancellation), so the next restore of the same checkpoint would find it deleted.
 *
 * <p>The sources have different uids; the verify job ignores the load source's state (it must probe
 * every key from 0, not resume the sequence). Stateless.
 */
public final class RescaleJobs {

    public static final int MAX_PARALLELISM = 128;

    /** uid of the keyed operator in both jobs. */
    public static final String KEYED_UID = "keyed-values";

    /** Name of the verify operator; its job vertex is the one whose restore is measured. */
    public static final String VERIFY_NAME = "verify-values";

    private RescaleJobs() {}

    /** The load job at {@code parallelism}: writes keys {@code 0..keys-1} and keeps running. */
    public static JobGraph load(Configuration config, int parallelism, long keys, int valueBytes) {
        StreamExecutionEnvironment env = environment(config, parallelism);
        env.fromSequence(0, Long.MAX_VALUE)
                .setParallelism(1)
                .uid("load-source")
                .name("load-source")
                .flatMap(new FirstKeys(keys))
                .setParallelism(1)
                .uid("load-first-keys")
                .name("first-keys")
                .keyBy(k -> k, Types.LONG)
                .process(new WriteValues(valueBytes))
                .uid(KEYED_UID)
                .name("write-values")
                .sinkTo(new DiscardingSink<>())
                .name("discard");
        return env.getStreamGraph().getJobGraph();
    }

    /**
     * The verify job at {@code parallelism}, restoring {@code checkpointPath} in {@code claimMode}
     * (set both on the job graph and in the job's configuration, where state backends read it):
     * probes keys {@code 0..keys-1} once each and keeps running until cancelled. The verify job
     * takes no checkpoint and is always cancelled, so even a CLAIM restore leaves the retained
     * checkpoint usable for the next restore: Flink discards a claimed checkpoint when a newer one
     * subsumes it or when the job finishes, and the backends never delete the files of a restored
     * checkpoint.
     */
    public static JobGraph verify(
            Configuration config,
            int parallelism,
            long keys,
            int valueBytes,
            String checkpointPath,
            RecoveryClaimMode claimMode) {
        // as `flink run -s <path> -claimMode <mode>` does: backends that act on the claim mode
        // (ForSt, ours) read it from the configuration, not from the job graph's restore settings
        Configuration withClaimMode = new Configuration(config);
        withClaimMode.set(StateRecoveryOptions.RESTORE_MODE, claimMode);
        StreamExecutionEnvironment env = environment(withClaimMode, parallelism);
        env.fromSequence(0, Long.MAX_VALUE)
                .setParallelism(1)
                .uid("probe-source")
                .name("probe-source")
                .flatMap(new FirstKeys(keys))
                .setParallelism(1)
                .uid("probe-first-keys")
                .name("probe-first-keys")
                .keyBy(k -> k, Types.LONG)
                .process(new VerifyValues(valueBytes))
                .uid(KEYED_UID)
                .name(VERIFY_NAME)
                .sinkTo(new DiscardingSink<>())
                .name("discard");
        JobGraph job = env.getStreamGraph().getJobGraph();
        job.setSavepointRestoreSettings(
                SavepointRestoreSettings.forPath(checkpointPath, true, claimMode));
        return job;
    }

    private static StreamExecutionEnvironment environment(Configuration config, int parallelism) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
        env.setParallelism(parallelism);
        env.setMaxParallelism(MAX_PARALLELISM);
        return env;
    }
}
