package io.github.flinkstate.benchmarks.demo;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Counts records per key in a {@link ValueState} (the FLIP-325 benchmark logic) and, when asked,
 * fails once after a checkpoint has completed, to exercise recovery. Records the largest count seen
 * per key in a JVM-wide map: with exactly-once state, that is exactly the number of records of the
 * key, however often records were replayed.
 */
public class CountPerKey extends KeyedProcessFunction<Long, Long, Tuple2<Long, Long>>
        implements CheckpointListener {

    /** Largest count per key of the current run (the demo's results). */
    public static final Map<Long, Long> MAX_COUNT = new ConcurrentHashMap<>();

    static final AtomicBoolean CHECKPOINT_COMPLETED = new AtomicBoolean();
    static final AtomicBoolean FAILED = new AtomicBoolean();

    private final long failAfterRecordsPerSubtask;
    private transient ValueState<Long> count;
    private transient long processed;

    /**
     * @param failAfterRecordsPerSubtask inject one failure after that many records; <= 0: never
     */
    public CountPerKey(long failAfterRecordsPerSubtask) {
        this.failAfterRecordsPerSubtask = failAfterRecordsPerSubtask;
    }

    public static void resetRun() {
        MAX_COUNT.clear();
        CHECKPOINT_COMPLETED.set(false);
        FAILED.set(false);
    }

    @Override
    public void open(OpenContext openContext) {
        count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Long.class));
        processed = 0;
    }

    @Override
    public void processElement(Long value, Context ctx, Collector<Tuple2<Long, Long>> out)
            throws Exception {
        Long current = count.value();
        long next = current == null ? 1 : current + 1;
        count.update(next);
        MAX_COUNT.merge(ctx.getCurrentKey(), next, Math::max);
        out.collect(Tuple2.of(ctx.getCurrentKey(), next));
        processed++;
        if (failAfterRecordsPerSubtask > 0
                && processed >= failAfterRecordsPerSubtask
                && CHECKPOINT_COMPLETED.get()
                && FAILED.compareAndSet(false, true)) {
            throw new RuntimeException(
                    "Injected failure (demo): the job restarts from the last checkpoint");
        }
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
        CHECKPOINT_COMPLETED.set(true);
    }

    /** The FLIP-325 key selector: 1000 keys, 500 of them active in each run of 1000 records. */
    public static long flip325Key(long x) {
        return (x % 500) + 500 * ((x / 1000) % 2);
    }
}
