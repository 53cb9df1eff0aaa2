package io.github.flinkstate.cluster.job;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.connector.source.lib.NumberSequenceSource;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;

/**
 * The job the cluster tests submit as a user jar: a checkpointed sequence {@code 0..N-1}, paced,
 * keyed by {@link JobInput#key}, feeding
 *
 * <ul>
 *   <li>event-time session windows (merging windows: aggregating state merged with {@code
 *       mergeNamespaces}, window timers re-registered on every merge) with a count/sum aggregate;
 *   <li>a function with TTL value and TTL reducing state and an end-of-input timer;
 * </ul>
 *
 * and writing one line per result to files under {@code --results}. There are no watermarks before
 * the end of the input, so every window and timer fires once, at the end, and the results are exact
 * only if every record changed the state exactly once.
 *
 * <p>Arguments: {@code --records N --keys K --block B --rate R --results URI}; {@code R} is records
 * per second per source subtask. Backend, checkpointing and restore settings come from the job
 * configuration the client submits with the job.
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
        double rate = Double.parseDouble(a.getOrDefault("rate", "0"));
        String results = a.get("results");
        if (results == null) {
            throw new IllegalArgumentException("--results is required");
        }

        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        DataStream<Long> records =
                env.fromSource(
                                new NumberSequenceSource(0, input.records() - 1),
                                WatermarkStrategy.<Long>noWatermarks()
                                        .withTimestampAssigner((x, ts) -> input.eventTime(x)),
                                "sequence")
                        .uid("sequence")
                        .map(new Pace<>(rate))
                        .uid("pace")
                        .name("pace");
        KeyedStream<Long, Long> keyed = records.keyBy(new RecordKey(input.keys()));

        DataStream<String> sessions =
                keyed.window(
                                EventTimeSessionWindows.withGap(
                                        Duration.ofMillis(input.sessionGapMillis())))
                        .aggregate(new CountSum(), new SessionResult())
                        .uid("sessions")
                        .name("sessions");
        DataStream<String> ttl = keyed.process(new TtlCounts()).uid("ttl").name("ttl");

        sessions.union(ttl).sinkTo(new ResultFileSink(results)).uid("results").name("results");
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
