package io.github.flinkstate.testing.job;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.AggregatingState;
import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ReducingState;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * The job kit's keyed function: per key it keeps a value state (count), a reducing state (sum), an
 * aggregating state (max), a list state (a deterministic sample of the records) and a map state
 * (records per {@code record % 4}), and one event-time timer at the end of time, registered with
 * the key's first record. The timer fires when the bounded input ends (the source's final
 * watermark) and reports the key's {@link KeySummary} to the {@link JobRun}; it emits nothing.
 *
 * <p>In count-only mode (the FLIP-325 benchmark's workload) it keeps the value state and the timer
 * only.
 *
 * <p>It may throw one injected failure, once the run processed {@code failAfterRecords} records
 * (replays included) and a checkpoint completed.
 *
 * <p>Thread safety: one instance per subtask; reports go to the thread-safe {@link JobRun}.
 */
public final class StateKeepingFunction extends KeyedProcessFunction<Long, Long, Long>
        implements CheckpointListener {

    private static final long serialVersionUID = 1L;

    /** Timestamp of the end-of-input timer (fires on the final watermark, Long.MAX_VALUE). */
    static final long END_OF_TIME = Long.MAX_VALUE;

    private final String runId;
    private final long failAfterRecords;
    private final boolean countOnly;

    private transient JobRun run;
    private transient ValueState<Long> count;
    private transient ReducingState<Long> sum;
    private transient AggregatingState<Long, Long> max;
    private transient ListState<Long> sample;
    private transient MapState<Long, Long> residues;

    /**
     * @param failAfterRecords throw one failure after this many records of the run once a
     *     checkpoint completed; {@code <= 0}: never
     * @param countOnly keep only the value state (count) and the timer
     */
    StateKeepingFunction(String runId, long failAfterRecords, boolean countOnly) {
        this.runId = runId;
        this.failAfterRecords = failAfterRecords;
        this.countOnly = countOnly;
    }

    /** Whether {@code record} goes into the list state: a hash picks about 1 in 32 records. */
    static boolean sampled(long record) {
        long h = record * 0x9E3779B97F4A7C15L;
        h ^= h >>> 29;
        return (h & 31) == 0;
    }

    @Override
    public void open(OpenContext openContext) {
        run = JobRun.get(runId);
        count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Types.LONG));
        if (countOnly) {
            return;
        }
        sum =
                getRuntimeContext()
                        .getReducingState(
                                new ReducingStateDescriptor<>("sum", Long::sum, Types.LONG));
        max =
                getRuntimeContext()
                        .getAggregatingState(
                                new AggregatingStateDescriptor<>("max", new Max(), Types.LONG));
        sample = getRuntimeContext().getListState(new ListStateDescriptor<>("sample", Types.LONG));
        residues =
                getRuntimeContext()
                        .getMapState(new MapStateDescriptor<>("residues", Types.LONG, Types.LONG));
    }

    @Override
    public void processElement(Long record, Context ctx, Collector<Long> out) throws Exception {
        Long c = count.value();
        if (c == null) {
            ctx.timerService().registerEventTimeTimer(END_OF_TIME);
            c = 0L;
        }
        count.update(c + 1);
        if (!countOnly) {
            updateOtherStates(record);
        }

        long processed = run.recordProcessed();
        if (failAfterRecords > 0
                && processed >= failAfterRecords
                && run.completedCheckpoints() > 0
                && run.failOnce()) {
            throw new RuntimeException(
                    "Injected failure after " + processed + " records (ExactlyOnceJob)");
        }
    }

    private void updateOtherStates(long record) throws Exception {
        sum.add(record);
        max.add(record);
        if (sampled(record)) {
            sample.add(record);
        }
        long residue = record % 4;
        Long r = residues.get(residue);
        residues.put(residue, r == null ? 1 : r + 1);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<Long> out) throws Exception {
        Long c = count.value();
        if (countOnly) {
            run.report(KeySummary.countOnly(ctx.getCurrentKey(), c == null ? 0 : c));
            return;
        }
        List<Long> sampledRecords = new ArrayList<>();
        Iterable<Long> listed = sample.get();
        if (listed != null) {
            listed.forEach(sampledRecords::add);
        }
        sampledRecords.sort(null);
        TreeMap<Long, Long> residueCounts = new TreeMap<>();
        for (Map.Entry<Long, Long> e : residues.entries()) {
            residueCounts.put(e.getKey(), e.getValue());
        }
        Long s = sum.get();
        Long m = max.get();
        run.report(
                new KeySummary(
                        ctx.getCurrentKey(),
                        c == null ? 0 : c,
                        s == null ? 0 : s,
                        m == null ? Long.MIN_VALUE : m,
                        List.copyOf(sampledRecords),
                        residueCounts));
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
        run.checkpointComplete(checkpointId);
    }

    /** Largest record so far (accumulator Long.MIN_VALUE when empty). */
    static final class Max implements AggregateFunction<Long, Long, Long> {
        private static final long serialVersionUID = 1L;

        @Override
        public Long createAccumulator() {
            return Long.MIN_VALUE;
        }

        @Override
        public Long add(Long value, Long acc) {
            return Math.max(value, acc);
        }

        @Override
        public Long getResult(Long acc) {
            return acc;
        }

        @Override
        public Long merge(Long a, Long b) {
            return Math.max(a, b);
        }
    }
}
