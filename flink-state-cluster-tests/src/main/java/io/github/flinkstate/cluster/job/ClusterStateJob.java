package io.github.flinkstate.cluster.job;

import io.github.flinkstate.testing.job.ExactlyOnceJob;
import io.github.flinkstate.testing.job.KeyFunction;
import io.github.flinkstate.testing.job.StateKeepingFunction;
import io.github.flinkstate.testing.job.Throttle;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;

/**
 * The job the cluster tests submit as a user jar. The shared job kit (flink-state-testing) gives
 * the checkpointed source of {@code 0..N-1}, the throttle and the keyed function with value, list,
 * map, reducing and aggregating state and an end-of-input timer; this job adds, on the same keyed
 * stream ({@link JobInput#key}),
 *
 * <ul>
 *   <li>event-time session windows (merging windows: aggregating state merged with {@code
 *       mergeNamespaces}, window timers re-registered on every merge) with a count/sum aggregate;
 *   <li>a function with TTL value and TTL reducing state and an end-of-input timer,
 * </ul>
 *
 * and writes one line per result to files under {@code --results} ({@link ResultFileSink}). There
 * are no watermarks before the end of the input, so every window and timer fires once, at the end,
 * and the results are exact only if every record changed the state exactly once.
 *
 * <p>Arguments: {@code --records N --keys K --block B --throttle-every E --results URI}: the
 * throttle sleeps 1 ms every {@code E} records per source subtask ({@code 0}: no throttle).
 * Backend, checkpointing and restore settings come from the job configuration the client submits
 * with the job. Operator uids are fixed, so any run restores from any other's checkpoint or
 * savepoint.
 */
public final class ClusterStateJob {

    private ClusterStateJob() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> a = parse(args);
        JobInput input =
                new JobInput(
                        Long.parseLong(a.get("records")),
                        Integer.parseInt(a.get("keys")),
                        Long.parseLong(a.get("block")));
        int throttleEvery = Integer.parseInt(a.getOrDefault("throttle-every", "0"));
        String results = a.get("results");
        if (results == null) {
            throw new IllegalArgumentException("--results is required");
        }

        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        DataStream<Long> records = ExactlyOnceJob.source(env, input.records());
        if (throttleEvery > 0) {
            records = records.map(Throttle.every(throttleEvery)).uid("throttle").name("throttle");
        }
        KeyFunction keys = KeyFunction.modulo(input.keys());
        KeyedStream<Long, Long> keyed =
                records.assignTimestampsAndWatermarks(
                                WatermarkStrategy.<Long>noWatermarks()
                                        .withTimestampAssigner((x, ts) -> input.eventTime(x)))
                        .uid("timestamps")
                        .keyBy(x -> keys.key(x), Types.LONG);

        DataStream<String> kit =
                keyed.process(StateKeepingFunction.standalone())
                        .uid("state")
                        .name("keyed state (value, list, map, reducing, aggregating, timer)");
        DataStream<String> sessions =
                keyed.window(
                                EventTimeSessionWindows.withGap(
                                        Duration.ofMillis(input.sessionGapMillis())))
                        .aggregate(new CountSum(), new SessionResult())
                        .uid("sessions")
                        .name("session windows");
        DataStream<String> ttl = keyed.process(new TtlCounts()).uid("ttl").name("ttl state");

        kit.union(sessions, ttl).sinkTo(new ResultFileSink(results)).uid("results").name("results");
        env.execute(a.getOrDefault("name", "cluster-state-job"));
    }

    private static Map<String, String> parse(String[] args) {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!args[i].startsWith("--")) {
                throw new IllegalArgumentException("expected --name value, got " + args[i]);
            }
            m.put(args[i].substring(2), args[i + 1]);
        }
        return m;
    }
}
