package io.github.flinkstate.changelog;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.changelog.testutils.FaultInjectingFileSystem;
import java.io.File;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.StateChangelogOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.fs.Path;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A real job on a MiniCluster with {@code state.backend.type} = {@link
 * ChangelogStateBackendFactory} and {@code state.changelog.storage} = {@code dfs-batched}: frequent
 * checkpoints, periodic materialization, one injected failure after checkpoints completed, and an
 * exact per-key count check after recovery; and a run where every attempt of some uploads fails,
 * which must fail checkpoints but not the job.
 *
 * <p>Check: the sink keeps, per key, the highest count the keyed operator emitted. A restore that
 * lost or duplicated changes would end above or below the exact number of records per key, because
 * the source resumes from the checkpoint, not from the start.
 */
class ChangelogDfsBatchedITCase {

    private static final long RECORDS = 20_000;
    private static final int KEYS = 16;

    static final AtomicBoolean FAILED = new AtomicBoolean();
    static final AtomicInteger COMPLETED_CHECKPOINTS = new AtomicInteger();
    static final Map<Long, Long> MAX_COUNT = new ConcurrentHashMap<>();

    @TempDir File tmp;

    @ParameterizedTest(name = "delegate={0}, localRecovery={1}")
    @CsvSource({"hashmap,false", "rocksdb,false", "hashmap,true", "rocksdb,true"})
    void jobRecoversExactlyFromDfsBatchedChangelog(String delegate, boolean localRecovery)
            throws Exception {
        Configuration config = config(delegate, new Path(new File(tmp, "dstl").toURI()));
        config.set(StateRecoveryOptions.LOCAL_RECOVERY, localRecovery);
        config.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        config.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 3);
        config.set(
                RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(100));

        runJob(config, new FailOnceAfterCheckpoints());

        assertThat(FAILED).isTrue();
        File[] jobDirs = new File(tmp, "dstl").listFiles();
        assertThat(jobDirs).as("our DSTL created its job directory").hasSize(1);
        assertThat(new File(jobDirs[0], "dstl")).isDirectory();
        assertThat(MAX_COUNT).isEqualTo(expectedCounts());
    }

    /**
     * Every attempt of some uploads fails: the affected checkpoints fail (tolerated here), the job
     * does not restart (restarts are disabled), and later checkpoints upload the changes again.
     */
    @ParameterizedTest(name = "delegate={0}")
    @ValueSource(strings = {"hashmap", "rocksdb"})
    void failedUploads_failCheckpointsButNotTheJob(String delegate) throws Exception {
        FaultInjectingFileSystem.reset();
        try {
            Configuration config =
                    config(delegate, FaultInjectingFileSystem.path(new File(tmp, "dstl")));
            config.set(DfsChangelogOptions.MAX_ATTEMPTS, 2);
            config.set(DfsChangelogOptions.RETRY_DELAY, Duration.ZERO);
            config.set(CheckpointingOptions.TOLERABLE_FAILURE_NUMBER, Integer.MAX_VALUE);
            config.set(RestartStrategyOptions.RESTART_STRATEGY, "none");

            runJob(config, new FailUploadsAfterCheckpoints());

            assertThat(FAILED).as("upload failures were injected").isTrue();
            assertThat(FaultInjectingFileSystem.creates()).isGreaterThan(6);
            assertThat(MAX_COUNT).isEqualTo(expectedCounts());
        } finally {
            FaultInjectingFileSystem.reset();
        }
    }

    private static Configuration config(String delegate, Path dstlBase) {
        FAILED.set(false);
        COMPLETED_CHECKPOINTS.set(0);
        MAX_COUNT.clear();
        Configuration config = new Configuration();
        config.set(StateBackendOptions.STATE_BACKEND, ChangelogStateBackendFactory.class.getName());
        config.set(DfsChangelogOptions.DELEGATE, delegate);
        config.set(StateChangelogOptions.STATE_CHANGE_LOG_STORAGE, "dfs-batched");
        config.set(DfsChangelogOptions.BASE_PATH, dstlBase.toString());
        config.set(StateChangelogOptions.PERIODIC_MATERIALIZATION_INTERVAL, Duration.ofMillis(500));
        config.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofMillis(100));
        return config;
    }

    private void runJob(Configuration config, RichMapFunction<Long, Long> faults) throws Exception {
        config.set(
                CheckpointingOptions.CHECKPOINTS_DIRECTORY,
                new Path(new File(tmp, "checkpoints").toURI()).toString());
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
        env.setParallelism(2);
        env.fromSequence(1, RECORDS)
                .map(faults)
                .keyBy(v -> v % KEYS)
                .process(new CountPerKey())
                .sinkTo(new MaxCountSink());
        env.execute("dfs-batched changelog ITCase");
    }

    private static Map<Long, Long> expectedCounts() {
        Map<Long, Long> expected = new HashMap<>();
        for (long v = 1; v <= RECORDS; v++) {
            expected.merge(v % KEYS, 1L, Long::sum);
        }
        return expected;
    }

    /**
     * Slows the stream down; in the second half, after 3 completed checkpoints, makes the next 6
     * DSTL file creations fail (every attempt of at least one batch), once.
     */
    static final class FailUploadsAfterCheckpoints extends RichMapFunction<Long, Long>
            implements CheckpointListener {

        @Override
        public Long map(Long value) throws Exception {
            if (value > RECORDS / 2
                    && COMPLETED_CHECKPOINTS.get() >= 3
                    && FAILED.compareAndSet(false, true)) {
                FaultInjectingFileSystem.failNextCreates(6);
            }
            if (value % 50 == 0 || (value > RECORDS / 2 && COMPLETED_CHECKPOINTS.get() < 3)) {
                Thread.sleep(1);
            }
            return value;
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) {
            COMPLETED_CHECKPOINTS.incrementAndGet();
        }
    }

    /** Slows the stream down and fails once, in the second half, after 3 completed checkpoints. */
    static final class FailOnceAfterCheckpoints extends RichMapFunction<Long, Long>
            implements CheckpointListener {

        @Override
        public Long map(Long value) throws Exception {
            if (!FAILED.get() && value > RECORDS / 2) {
                if (COMPLETED_CHECKPOINTS.get() >= 3) {
                    FAILED.set(true);
                    throw new RuntimeException("Injected failure at record " + value);
                }
                Thread.sleep(2);
            } else if (value % 50 == 0) {
                Thread.sleep(1);
            }
            return value;
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) {
            COMPLETED_CHECKPOINTS.incrementAndGet();
        }
    }

    /** Counts records per key in keyed state and emits (key, count). */
    static final class CountPerKey extends KeyedProcessFunction<Long, Long, Tuple2<Long, Long>> {

        private transient ValueState<Long> count;

        @Override
        public void open(OpenContext openContext) {
            count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Long.class));
        }

        @Override
        public void processElement(Long value, Context ctx, Collector<Tuple2<Long, Long>> out)
                throws Exception {
            long next = (count.value() == null ? 0 : count.value()) + 1;
            count.update(next);
            out.collect(Tuple2.of(ctx.getCurrentKey(), next));
        }
    }

    /** Records the highest count seen per key in a static map (MiniCluster runs in this JVM). */
    static final class MaxCountSink implements Sink<Tuple2<Long, Long>> {

        @Override
        public SinkWriter<Tuple2<Long, Long>> createWriter(WriterInitContext context) {
            return new SinkWriter<>() {
                @Override
                public void write(Tuple2<Long, Long> element, Context context) {
                    MAX_COUNT.merge(element.f0, element.f1, Math::max);
                }

                @Override
                public void flush(boolean endOfInput) {}

                @Override
                public void close() {}
            };
        }
    }
}
