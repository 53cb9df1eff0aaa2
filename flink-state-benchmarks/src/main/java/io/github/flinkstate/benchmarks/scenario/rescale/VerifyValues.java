package io.github.flinkstate.benchmarks.scenario.rescale;

import java.util.Arrays;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Verify phase: for every probe key it receives, reads the restored value and records in {@link
 * ProbeTally} whether it is present and equal to {@link StateValues#expected}. Never writes state.
 *
 * <p>Thread safety: one instance per subtask; {@link ProbeTally} is thread-safe.
 */
public final class VerifyValues extends KeyedProcessFunction<Long, Long, Long> {

    private final int valueBytes;
    private transient ValueState<byte[]> value;
    private transient int subtask;

    public VerifyValues(int valueBytes) {
        this.valueBytes = valueBytes;
    }

    @Override
    public void open(OpenContext ctx) {
        value = getRuntimeContext().getState(StateValues.descriptor());
        subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
    }

    @Override
    public void processElement(Long key, Context ctx, Collector<Long> out) throws Exception {
        byte[] v = value.value();
        ProbeTally.Outcome outcome =
                v == null
                        ? ProbeTally.Outcome.MISSING
                        : Arrays.equals(v, StateValues.expected(key, valueBytes))
                                ? ProbeTally.Outcome.OK
                                : ProbeTally.Outcome.WRONG;
        ProbeTally.record(subtask, outcome);
    }
}
