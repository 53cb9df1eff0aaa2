package io.github.flinkstate.testing.job;

import java.util.Map;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.lib.NumberSequenceSource;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

/**
 * The exactly-once job kit: a checkpointed source of {@code 0..N-1} (Flink's FLIP-27 {@link
 * NumberSequenceSource}: its split positions are checkpointed, so a restored job resumes exactly
 * after the last checkpoint), an optional {@link Throttle}, {@code keyBy} a {@link KeyFunction},
 * and {@link StateKeepingFunction} (value, list, map, reducing and aggregating state plus an
 * end-of-input timer; or the same through the asynchronous state API, {@link
 * AsyncStateKeepingFunction}), optionally failing once after a checkpoint. {@link #check()}
 * compares the per-key results with {@link ExpectedResults} computed from the input alone.
 *
 * <pre>{@code
 * ExactlyOnceJob job = ExactlyOnceJob.builder(60_000)
 *         .keys(KeyFunction.modulo(700))
 *         .throttle(Throttle.every(20).untilCheckpoints(1))
 *         .failOnceAfter(20_000)
 *         .build();
 * job.addTo(env);                       // or job.jobGraph(config, parallelism)
 * env.execute();                        // on a MiniCluster in this JVM
 * job.check().assertExact();
 * job.close();
 * }</pre>
 *
 * <p>The operators report into a {@link JobRun} of this JVM ({@link #run()}), so the job must run
 * on a MiniCluster in the same JVM. The operators have the uids {@code source}, {@code throttle}
 * and {@code state}, so a savepoint of one job restores into another built by the kit (any backend,
 * any parallelism, same key function).
 *
 * <p>Thread safety: build and check on the test thread; the run is thread-safe.
 */
public final class ExactlyOnceJob implements AutoCloseable {

    private final long records;
    private final KeyFunction keys;
    private final Throttle throttle;
    private final long failAfterRecords;
    private final boolean countOnly;
    private final boolean asyncState;
    private final JobRun run;

    private ExactlyOnceJob(Builder b) {
        this.records = b.records;
        this.keys = b.keys;
        this.failAfterRecords = b.failAfterRecords;
        this.countOnly = b.countOnly;
        this.asyncState = b.asyncState;
        this.run = JobRun.start(b.name);
        this.throttle = b.throttle == null ? null : b.throttle.forRun(run.id());
    }

    /** A job over {@code records} records ({@code 0..records-1}). */
    public static Builder builder(long records) {
        return new Builder(records);
    }

    /**
     * The checkpointed, exactly-once source of {@code 0..records-1} alone (uid {@code source}), for
     * jobs that keep their own state.
     */
    public static SingleOutputStreamOperator<Long> source(
            StreamExecutionEnvironment env, long records) {
        return env.fromSource(
                        new NumberSequenceSource(0, records - 1),
                        WatermarkStrategy.noWatermarks(),
                        "sequence 0.." + (records - 1))
                .uid("source");
    }

    /** Adds source, throttle, keyed state function and a discarding sink to {@code env}. */
    public void addTo(StreamExecutionEnvironment env) {
        DataStream<Long> stream = source(env, records);
        if (throttle != null) {
            stream = stream.map(throttle).uid("throttle").name("throttle");
        }
        KeyFunction k = keys;
        if (asyncState) {
            stream.keyBy(x -> k.key(x), Types.LONG)
                    .enableAsyncState()
                    .process(new AsyncStateKeepingFunction(run.id(), failAfterRecords))
                    .uid("state")
                    .name(
                            "keyed state, asynchronous API (value, list, map, reducing, aggregating, timer)")
                    .sinkTo(new DiscardingSink<>())
                    .uid("sink");
            return;
        }
        stream.keyBy(x -> k.key(x), Types.LONG)
                .process(new StateKeepingFunction(run.id(), failAfterRecords, countOnly))
                .uid("state")
                .name(
                        countOnly
                                ? "keyed state (value, timer)"
                                : "keyed state (value, list, map, reducing, aggregating, timer)")
                .sinkTo(new DiscardingSink<>())
                .uid("sink");
    }

    /** The run's live reports (progress, checkpoints, injected failure, throttle switch). */
    public JobRun run() {
        return run;
    }

    public long records() {
        return records;
    }

    /** The expected per-key results, computed from the input alone. */
    public Map<Long, KeySummary> expected() {
        return ExpectedResults.compute(records, keys, countOnly);
    }

    /** Compares what the run reported with {@link #expected()}. */
    public ResultCheck check() {
        return ResultCheck.compare(expected(), run.finals());
    }

    /** Removes the run from the JVM-wide registry. */
    @Override
    public void close() {
        run.close();
    }

    /** Builder of {@link ExactlyOnceJob}. */
    public static final class Builder {
        private final long records;
        private KeyFunction keys = KeyFunction.modulo(100);
        private Throttle throttle;
        private long failAfterRecords;
        private String name = "job";
        private boolean countOnly;
        private boolean asyncState;

        private Builder(long records) {
            if (records <= 0) {
                throw new IllegalArgumentException("records must be positive: " + records);
            }
            this.records = records;
        }

        /** The key of each record (default {@code modulo(100)}). */
        public Builder keys(KeyFunction keys) {
            this.keys = keys;
            return this;
        }

        /** A throttle between source and keyed function (default: none). */
        public Builder throttle(Throttle throttle) {
            this.throttle = throttle;
            return this;
        }

        /** One failure once the run processed {@code n} records and a checkpoint completed. */
        public Builder failOnceAfter(long n) {
            this.failAfterRecords = n;
            return this;
        }

        /**
         * Keep only the count (value state) and the timer, as the FLIP-325 benchmark's job does;
         * the check then compares counts only.
         */
        public Builder countOnly() {
            this.countOnly = true;
            return this;
        }

        /**
         * Whether to keep the same state through Flink's asynchronous state API ({@code
         * enableAsyncState()}, {@link AsyncStateKeepingFunction}; default: no); not with {@link
         * #countOnly()}.
         */
        public Builder asyncState(boolean on) {
            this.asyncState = on;
            return this;
        }

        /** A name for the run's id (shows in failure messages). */
        public Builder name(String name) {
            this.name = name;
            return this;
        }

        public ExactlyOnceJob build() {
            if (asyncState && countOnly) {
                throw new IllegalStateException(
                        "asyncState() keeps all five states: no countOnly()");
            }
            return new ExactlyOnceJob(this);
        }
    }
}
