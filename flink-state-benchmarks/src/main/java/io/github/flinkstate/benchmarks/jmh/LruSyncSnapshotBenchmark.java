package io.github.flinkstate.benchmarks.jmh;

import io.github.flinkstate.lru.backend.LruCacheKeyedStateBackend;
import io.github.flinkstate.lru.cow.CacheOwner;
import io.github.flinkstate.lru.cow.CowLruMap;
import io.github.flinkstate.lru.cow.CowSnapshot;
import java.util.concurrent.RunnableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The synchronous phase of a checkpoint of the LRU cache with {@code entries} cached, dirty values
 * (1,000,000 by default), as a latency distribution ({@code Mode.SampleTime}: JMH reports the
 * median, p99 and max):
 *
 * <ul>
 *   <li>{@code cacheSnapshot}: the cache's own part, {@link CowLruMap#snapshot()} (a version bump
 *       and a copy of the bucket array, no entry copied), then its release; this replaces the
 *       former {@code SyncSnapshotScenario};
 *   <li>{@code backendSnapshot}: the whole synchronous part of {@code snapshot(...)} of the LRU
 *       keyed backend over RocksDB (the {@code LRU_100} variant of {@link BenchmarkBackend}): the
 *       cache's part plus RocksDB's own synchronous phase (its delegate holds nothing here, every
 *       value is only in the cache). The asynchronous part is cancelled after each invocation,
 *       which releases the frozen view.
 * </ul>
 *
 * <p>Work check: after every invocation no snapshot of the cache is left running; the set-up
 * entries are all in the cache.
 *
 * <p>Run: {@code java -jar flink-state-benchmarks/target/benchmarks.jar LruSyncSnapshotBenchmark
 * -rf json -rff target/jmh-lru-sync-snapshot.json}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(
        value = 2,
        jvmArgsAppend = {
            JmhJvmArgs.HEAP,
            JmhJvmArgs.OPEN_UTIL,
            JmhJvmArgs.OPEN_LANG,
            JmhJvmArgs.OPEN_REFLECT,
            JmhJvmArgs.OPEN_IO,
            JmhJvmArgs.OPEN_NIO,
            JmhJvmArgs.OPEN_NIO_CH,
            JmhJvmArgs.OPEN_NET,
            JmhJvmArgs.OPEN_CONCURRENT,
            JmhJvmArgs.OPEN_ATOMIC,
            JmhJvmArgs.OPEN_TIME,
            JmhJvmArgs.OPEN_TEXT,
            JmhJvmArgs.OPEN_MATH
        })
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class LruSyncSnapshotBenchmark {

    private static final ValueStateDescriptor<Long> VALUE =
            new ValueStateDescriptor<>("value", LongSerializer.INSTANCE);

    @Param({"1000000"})
    public int entries;

    private CowLruMap map;
    private KeyedBackendFixture fixture;
    private LruCacheKeyedStateBackend<Long> lru;
    private RunnableFuture<SnapshotResult<KeyedStateHandle>> running;
    private long checkpointId;

    @Setup(Level.Trial)
    @SuppressWarnings("unchecked")
    public void setUp(org.openjdk.jmh.infra.BenchmarkParams params) throws Exception {
        if (params.getBenchmark().endsWith("cacheSnapshot")) {
            CacheOwner owner = entry -> {};
            map = new CowLruMap(entries);
            for (int i = 0; i < entries; i++) {
                map.insert(owner, (long) i, "ns", null, 0, (long) i, true);
            }
            return;
        }
        fixture = KeyedBackendFixture.open(BenchmarkBackend.LRU_100, entries);
        lru = (LruCacheKeyedStateBackend<Long>) fixture.backend();
        ValueState<Long> state = fixture.state(VALUE);
        for (long k = 0; k < entries; k++) {
            lru.setCurrentKey(k);
            state.update(k);
        }
        map = lru.getCache();
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        if (map.size() != entries) {
            throw new IllegalStateException(
                    "Work check failed: " + map.size() + " cached entries, expected " + entries);
        }
        if (fixture != null) {
            fixture.close();
            fixture = null;
        }
    }

    @TearDown(Level.Invocation)
    public void afterInvocation() {
        if (running != null) {
            running.cancel(true);
            running = null;
        }
        if (map.runningSnapshots() != 0) {
            throw new IllegalStateException(
                    "Work check failed: " + map.runningSnapshots() + " cache snapshots still run");
        }
    }

    @Benchmark
    public CowSnapshot cacheSnapshot() {
        CowSnapshot s = map.snapshot();
        map.release(s.version());
        return s;
    }

    @Benchmark
    public Object backendSnapshot() throws Exception {
        long id = ++checkpointId;
        running =
                lru.snapshot(
                        id,
                        0L,
                        fixture.streamFactory(id),
                        CheckpointOptions.forCheckpointWithDefaultLocation());
        return running;
    }
}
