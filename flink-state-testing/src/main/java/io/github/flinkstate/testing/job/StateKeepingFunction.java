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
 * aggregating state (the maximum of a hash of the records, {@link #maxInput}), a list state (a
 * deterministic sample of the records) and a map state (records per {@link #mapKey}, four user
 * keys), and one event-time timer at the end of time, registered with the key's first record. The
 * timer fires when the bounded input ends (the source's final watermark), reports the key's {@link
 * KeySummary} to the {@link JobRun} and emits the summary's {@code toString()}, so that a job on a
 * remote cluster (no {@link JobRun} in that JVM, see {@link #standalone()}) can write it out and be
 * checked against {@link ExpectedResults} by text.
 *
 * <p>In count-only mode (the FLIP-325 benchmark's workload) it keeps the value state and the timer
 * only.
 *
 * <p>It may throw one injected failure, once the run processed {@code failAfterRecords} records
 * (replays included) and a checkpoint completed.
 *
 * <p>Thread safety: one instance per subtask; reports go to the thread-safe {@link JobRun}.
 */
public final class StateKeepingFunction extends KeyedProcessFunction<Long, Long, String>
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

    /**
     * The function without a {@link JobRun}: for a job that runs in other JVMs (a real cluster). It
     * keeps all five states, only emits each key's summary at the end of the input and never fails
     * on purpose.
     */
    public static StateKeepingFunction standalone() {
        return new StateKeepingFunction(null, 0, false);
    }

    /**
     * The map state's user key of {@code record}: one of 0..3, by a hash of the record, so that a
     * key's records spread over several map entries whatever the key function (with {@code record %
     * 4} and keys {@code record % K}, K a multiple of 4, every key had a single entry).
     */
    static long mapKey(long record) {
        return mix(record) & 3;
    }

    /**
     * What the aggregating state takes the maximum of: a hash of the record, so that the maximum is
     * not simply the key's last record (records of a key mostly arrive in order, and a state that
     * forgot its accumulator would still report the last one).
     */
    static long maxInput(long record) {
        return mix(record ^ 0x5DEECE66DL) >>> 1;
    }

    /** A 64-bit finalizer (variant of splitmix64's): spreads every input bit over the result. */
    private static long mix(long x) {
        long h = x * 0xBF58476D1CE4E5B9L;
        h ^= h >>> 31;
        h *= 0x94D049BB133111EBL;
        return h ^ (h >>> 29);
    }

    /** Whether {@code record} goes into the list state: a hash picks about 1 in 32 records. */
    static boolean sampled(long record) {
        long h = record * 0x9E3779B97F4A7C15L;
        h ^= h >>> 29;
        return (h & 31) == 0;
    }

    @Override
    public void open(OpenContext openContext) {
        run = runId == null ? null : JobRun.get(runId);
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
    public void processElement(Long record, Context ctx, Collector<String> out) throws Exception {
        Long c = count.value();
        if (c == null) {
            ctx.timerService().registerEventTimeTimer(END_OF_TIME);
            c = 0L;
        }
        count.update(c + 1);
        if (!countOnly) {
            updateOtherStates(record);
        }

        if (run == null) {
            return;
        }
        long processed = run.recordProcessed();
        if (run.injectFailure(processed, failAfterRecords)) {
            throw new RuntimeException(
                    "Injected failure after " + processed + " records (ExactlyOnceJob)");
        }
    }

    private void updateOtherStates(long record) throws Exception {
        sum.add(record);
        max.add(maxInput(record));
        if (sampled(record)) {
            sample.add(record);
        }
        long residue = mapKey(record);
        Long r = residues.get(residue);
        residues.put(residue, r == null ? 1 : r + 1);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<String> out)
            throws Exception {
        Long c = count.value();
        if (countOnly) {
            report(KeySummary.countOnly(ctx.getCurrentKey(), c == null ? 0 : c), out);
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
        report(
                new KeySummary(
                        ctx.getCurrentKey(),
                        c == null ? 0 : c,
                        s == null ? 0 : s,
                        m == null ? Long.MIN_VALUE : m,
                        List.copyOf(sampledRecords),
                        residueCounts),
                out);
    }

    private void report(KeySummary summary, Collector<String> out) {
        if (run != null) {
            run.report(summary);
        }
        out.collect(summary.toString());
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
        if (run != null) {
            run.checkpointComplete(checkpointId);
        }
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
