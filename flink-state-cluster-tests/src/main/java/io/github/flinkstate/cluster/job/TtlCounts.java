package io.github.flinkstate.cluster.job;

import java.time.Duration;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ReducingState;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Count (value state) and sum (reducing state) per key, both with a TTL of one day (refreshed on
 * write, expired values never returned), and an event-time timer at the end of the input that emits
 * {@code ttl,<key>,<count>,<sum>}. The TTL never expires during a test, so the values must be
 * exact; what is exercised is the TTL wrapping (timestamped values, TTL serializers) through
 * checkpoints, restores, rescaling and savepoints that change the backend.
 */
final class TtlCounts extends KeyedProcessFunction<Long, Long, String> {

    private transient ValueState<Long> count;
    private transient ReducingState<Long> sum;

    @Override
    public void open(OpenContext context) {
        StateTtlConfig ttl =
                StateTtlConfig.newBuilder(Duration.ofDays(1))
                        .setUpdateType(StateTtlConfig.UpdateType.OnCreateAndWrite)
                        .setStateVisibility(StateTtlConfig.StateVisibility.NeverReturnExpired)
                        .build();
        ValueStateDescriptor<Long> countDesc = new ValueStateDescriptor<>("ttl-count", Types.LONG);
        countDesc.enableTimeToLive(ttl);
        ReducingStateDescriptor<Long> sumDesc =
                new ReducingStateDescriptor<>("ttl-sum", Long::sum, Types.LONG);
        sumDesc.enableTimeToLive(ttl);
        count = getRuntimeContext().getState(countDesc);
        sum = getRuntimeContext().getReducingState(sumDesc);
    }

    @Override
    public void processElement(Long record, Context ctx, Collector<String> out) throws Exception {
        Long c = count.value();
        if (c == null) {
            ctx.timerService().registerEventTimeTimer(Long.MAX_VALUE - 1);
            c = 0L;
        }
        count.update(c + 1);
        sum.add(record);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<String> out)
            throws Exception {
        out.collect("ttl," + ctx.getCurrentKey() + "," + count.value() + "," + sum.get());
    }
}
