package io.github.flinkstate.benchmarks.scenario.rescale;

import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Load phase: writes {@link StateValues#expected} for every key it receives and counts the writes
 * in a JVM-wide counter that the driver polls (the MiniCluster runs in the same JVM).
 *
 * <p>Thread safety: one instance per subtask; the static counter is atomic. {@link #reset()} before
 * each load job.
 */
public final class WriteValues extends KeyedProcessFunction<Long, Long, Long> {

    private static final AtomicLong WRITTEN = new AtomicLong();

    private final int valueBytes;
    private transient ValueState<byte[]> value;

    public WriteValues(int valueBytes) {
        this.valueBytes = valueBytes;
    }

    public static void reset() {
        WRITTEN.set(0);
    }

    /** Values written by all subtasks of the current load job. */
    public static long written() {
        return WRITTEN.get();
    }

    @Override
    public void open(OpenContext ctx) {
        value = getRuntimeContext().getState(StateValues.descriptor());
    }

    @Override
    public void processElement(Long key, Context ctx, Collector<Long> out) throws Exception {
        value.update(StateValues.expected(key, valueBytes));
        WRITTEN.incrementAndGet();
    }
}
