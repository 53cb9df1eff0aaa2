package io.github.flinkstate.testing.job;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.state.v2.AggregatingState;
import org.apache.flink.api.common.state.v2.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.v2.ListState;
import org.apache.flink.api.common.state.v2.ListStateDescriptor;
import org.apache.flink.api.common.state.v2.MapState;
import org.apache.flink.api.common.state.v2.MapStateDescriptor;
import org.apache.flink.api.common.state.v2.ReducingState;
import org.apache.flink.api.common.state.v2.ReducingStateDescriptor;
import org.apache.flink.api.common.state.v2.StateFuture;
import org.apache.flink.api.common.state.v2.ValueState;
import org.apache.flink.api.common.state.v2.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.function.ThrowingConsumer;

/**
 * {@link StateKeepingFunction}'s workload through Flink's asynchronous state API (FLIP-424, {@code
 * keyBy(...).enableAsyncState()}): the same five states and end-of-input timer, read and written
 * with {@code async*} calls chained on their futures, so that its {@link KeySummary summaries} are
 * checked against the same {@link ExpectedResults}. A backend without an asynchronous keyed backend
 * of its own runs it through Flink's adaptor over its synchronous one.
 *
 * <p>The timer is registered with the key's first record, inside the count's callback, so that a
 * backend that loses timers in a restore fails the check as with the synchronous function.
 *
 * <p>Thread safety: one instance per subtask; callbacks run on the task thread.
 */
final class AsyncStateKeepingFunction extends KeyedProcessFunction<Long, Long, String>
        implements CheckpointListener {

    private static final long serialVersionUID = 1L;

    private final String runId;
    private final long failAfterRecords;

    private transient JobRun run;
    private transient ValueState<Long> count;
    private transient ReducingState<Long> sum;
    private transient AggregatingState<Long, Long> max;
    private transient ListState<Long> sample;
    private transient MapState<Long, Long> residues;

    AsyncStateKeepingFunction(String runId, long failAfterRecords) {
        this.runId = runId;
        this.failAfterRecords = failAfterRecords;
    }

    @Override
    public void open(OpenContext openContext) {
        run = JobRun.get(runId);
        count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Types.LONG));
        sum =
                getRuntimeContext()
                        .getReducingState(
                                new ReducingStateDescriptor<>("sum", Long::sum, Types.LONG));
        max =
                getRuntimeContext()
                        .getAggregatingState(
                                new AggregatingStateDescriptor<>(
                                        "max", new StateKeepingFunction.Max(), Types.LONG));
        sample = getRuntimeContext().getListState(new ListStateDescriptor<>("sample", Types.LONG));
        residues =
                getRuntimeContext()
                        .getMapState(new MapStateDescriptor<>("residues", Types.LONG, Types.LONG));
    }

    @Override
    public void processElement(Long record, Context ctx, Collector<String> out) throws Exception {
        count.asyncValue()
                .thenAccept(
                        c -> {
                            if (c == null) { // the key's first record, as in StateKeepingFunction
                                ctx.timerService()
                                        .registerEventTimeTimer(StateKeepingFunction.END_OF_TIME);
                            }
                            count.asyncUpdate(c == null ? 1 : c + 1);
                        });
        sum.asyncAdd(record);
        max.asyncAdd(StateKeepingFunction.maxInput(record));
        if (StateKeepingFunction.sampled(record)) {
            sample.asyncAdd(record);
        }
        long residue = StateKeepingFunction.mapKey(record);
        residues.asyncGet(residue)
                .thenAccept(r -> residues.asyncPut(residue, r == null ? 1 : r + 1));

        long processed = run.recordProcessed();
        if (run.injectFailure(processed, failAfterRecords)) {
            throw new RuntimeException(
                    "Injected failure after " + processed + " records (ExactlyOnceJob, async)");
        }
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<String> out) {
        long key = ctx.getCurrentKey();
        List<Long> sampled = new ArrayList<>();
        TreeMap<Long, Long> residueCounts = new TreeMap<>();
        long[] figures = new long[3]; // count, sum, max
        ThrowingConsumer<Long, Exception> addSample = sampled::add;
        ThrowingConsumer<Map.Entry<Long, Long>, Exception> addResidue =
                e -> residueCounts.put(e.getKey(), e.getValue());
        StateFuture<Void> read =
                count.asyncValue()
                        .thenCompose(
                                c -> {
                                    figures[0] = c == null ? 0 : c;
                                    return sum.asyncGet();
                                })
                        .thenCompose(
                                s -> {
                                    figures[1] = s == null ? 0 : s;
                                    return max.asyncGet();
                                })
                        .thenCompose(
                                m -> {
                                    figures[2] = m == null ? Long.MIN_VALUE : m;
                                    return sample.asyncGet();
                                })
                        .thenCompose(it -> it.onNext(addSample))
                        .thenCompose(ignored -> residues.asyncEntries())
                        .thenCompose(it -> it.onNext(addResidue));
        read.thenAccept(
                ignored -> {
                    sampled.sort(null);
                    KeySummary summary =
                            new KeySummary(
                                    key,
                                    figures[0],
                                    figures[1],
                                    figures[2],
                                    List.copyOf(sampled),
                                    residueCounts);
                    run.report(summary);
                    out.collect(summary.toString());
                });
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
        run.checkpointComplete(checkpointId);
    }
}
