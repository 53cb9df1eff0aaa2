package io.github.flinkstate.cluster.job;

import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/** Emits {@code session,<key>,<window start>,<count>,<sum>} for every fired session. */
final class SessionResult extends ProcessWindowFunction<long[], String, Long, TimeWindow> {

    @Override
    public void process(Long key, Context context, Iterable<long[]> aggs, Collector<String> out) {
        for (long[] agg : aggs) {
            out.collect(
                    "session,"
                            + key
                            + ","
                            + context.window().getStart()
                            + ","
                            + agg[0]
                            + ","
                            + agg[1]);
        }
    }
}
