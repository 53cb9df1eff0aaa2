package io.github.flinkstate.benchmarks.scenario.changelog;

import io.github.flinkstate.testing.job.ExactlyOnceJob;
import io.github.flinkstate.testing.job.JobRun;
import io.github.flinkstate.testing.job.Throttle;
import java.time.Duration;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;

/**
 * The two workloads of the changelog scenario. Both read ids from the test kit's checkpointed
 * sequence source (one split, so ids are dense and a restored source continues after the load
 * phase) through the kit's {@link Throttle}, which counts emitted ids in the {@link JobRun} and,
 * from id {@code records} on, sleeps 1 ms per record (about 1000 records/s).
 *
 * <ul>
 *   <li>{@code value}: ValueState, one new key per record (key = record id);
 *   <li>{@code window}: 10 s sliding event-time windows every 1 s, 1000 keys, count aggregate,
 *       event time = id / 10 ms.
 * </ul>
 */
public final class ChangelogJobs {

    public static final String VALUE = "value";
    public static final String WINDOW = "window";

    private ChangelogJobs() {}

    public static JobGraph build(
            Configuration config, String workload, long records, int parallelism, JobRun run) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
        env.setParallelism(parallelism);
        DataStream<Long> ids =
                ExactlyOnceJob.source(env, Long.MAX_VALUE)
                        .setParallelism(1)
                        .map(Throttle.every(1).fromRecord(records).forRun(run.id()))
                        .setParallelism(1);
        if (workload.equals(VALUE)) {
            ids.keyBy(id -> id, Types.LONG)
                    .process(new NewKeyPerRecord())
                    .sinkTo(new DiscardingSink<>());
        } else if (workload.equals(WINDOW)) {
            ids.assignTimestampsAndWatermarks(
                            WatermarkStrategy.<Long>forMonotonousTimestamps()
                                    .withTimestampAssigner((id, ts) -> id / 10))
                    .setParallelism(1)
                    .keyBy(id -> id % 1000, Types.LONG)
                    .window(
                            SlidingEventTimeWindows.of(
                                    Duration.ofSeconds(10), Duration.ofSeconds(1)))
                    .aggregate(new WindowCount())
                    .sinkTo(new DiscardingSink<>());
        } else {
            throw new IllegalArgumentException("workload must be value or window: " + workload);
        }
        return env.getStreamGraph().getJobGraph();
    }
}
