package io.github.flinkstate.benchmarks.scenario.changelog;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/** The {@code value} workload: one ValueState write per record, every record a new key. */
final class NewKeyPerRecord extends KeyedProcessFunction<Long, Long, Long> {

    private transient ValueState<Long> value;

    @Override
    public void open(OpenContext ctx) {
        value = getRuntimeContext().getState(new ValueStateDescriptor<>("value", Types.LONG));
    }

    @Override
    public void processElement(Long id, Context ctx, Collector<Long> out) throws Exception {
        value.update(id);
    }
}
