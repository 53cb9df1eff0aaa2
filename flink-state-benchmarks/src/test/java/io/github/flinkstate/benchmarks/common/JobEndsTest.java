package io.github.flinkstate.benchmarks.common;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.junit.jupiter.api.Test;

/** A scenario's "the job ended" error carries the job's own failure. */
class JobEndsTest {

    @Test
    void theJobsFailureBecomesTheCause() throws Exception {
        Configuration config = new Configuration();
        config.setString("restart-strategy.type", "none");
        try (MiniCluster cluster =
                new MiniCluster(
                        new MiniClusterConfiguration.Builder()
                                .setConfiguration(config)
                                .setNumTaskManagers(1)
                                .setNumSlotsPerTaskManager(1)
                                .build())) {
            cluster.start();
            StreamExecutionEnvironment env =
                    StreamExecutionEnvironment.getExecutionEnvironment(config);
            env.fromSequence(0, 10).map(new Failing()).sinkTo(new DiscardingSink<>());
            JobID id = cluster.submitJob(env.getStreamGraph().getJobGraph()).get().getJobID();
            cluster.requestJobResult(id).get();

            IllegalStateException e = JobEnds.unexpected(cluster, id, "load: the job ended");

            assertThat(e).hasMessage("load: the job ended");
            assertThat(e).hasRootCauseMessage("record 0 is refused");
        }
    }

    private static final class Failing implements MapFunction<Long, Long> {
        @Override
        public Long map(Long value) {
            throw new IllegalArgumentException("record " + value + " is refused");
        }
    }
}
