package io.github.flinkstate.disagg.backend.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.DisaggregatedOptions;
import io.github.flinkstate.disagg.backend.DisaggregatedKeyedStateBackend;
import io.github.flinkstate.disagg.backend.testutil.DisaggBackends;
import java.io.File;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.filesystem.FsCheckpointStreamFactory;
import org.apache.flink.runtime.state.internal.InternalValueState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The gauges a keyed backend registers under {@code disaggregated}: they follow what the backend
 * does (flushes, the last checkpoint's files and bytes, reads that reach the primary storage after
 * a restore, block-cache hits) instead of being merely present.
 */
@Timeout(60)
class DisaggMetricsTest {

    private static final int KEYS = 4_000;
    private static final ValueStateDescriptor<String> VALUE =
            new ValueStateDescriptor<>("value", StringSerializer.INSTANCE);

    @TempDir File tmp;

    /** The option reaches the disk tier: whole-file copies mapped by default, or not at all. */
    @ParameterizedTest(name = "local-cache.mmap: {0}")
    @ValueSource(booleans = {true, false})
    void localCacheGauges_countWholeFileCopies_andTheMappedOnes(boolean mmap) throws Exception {
        try (DisaggBackends backends =
                new DisaggBackends(
                        DisaggBackends.backend(
                                        new File(tmp, "primary").toURI().toString(),
                                        MemorySize.parse("64kb"))
                                .with(
                                        DisaggregatedOptions.LOCAL_CACHE_SIZE,
                                        MemorySize.parse("64mb"))
                                .with(DisaggregatedOptions.LOCAL_CACHE_MMAP, mmap))) {
            CapturingGroup group = new CapturingGroup("");
            DisaggregatedKeyedStateBackend<Integer> writer =
                    backends.create(DisaggBackends.ALL, List.of(), group);
            writeKeys(writer);
            snapshot(writer); // flushes: the files written are copied whole
            long whole = group.longValue("disaggregated.localCacheWholeFiles");
            assertThat(whole).isPositive();
            long mapped = group.longValue("disaggregated.localCacheMappedFiles");
            if (mmap) {
                // a compaction may commit or drop a copy between the two reads
                assertThat(mapped).isPositive().isLessThanOrEqualTo(whole + 1);
            } else {
                assertThat(mapped).isZero();
            }
        }
    }

    /** Writes a value of about 50 bytes for each of the {@link #KEYS} keys. */
    private static void writeKeys(DisaggregatedKeyedStateBackend<Integer> writer) throws Exception {
        InternalValueState<Integer, VoidNamespace, String> v = value(writer);
        for (int k = 0; k < KEYS; k++) {
            writer.setCurrentKey(k);
            v.update("value-" + k + "-" + "x".repeat(40));
        }
    }

    @Test
    void gaugesFollowFlushesCheckpointsAndRemoteReads() throws Exception {
        try (DisaggBackends backends =
                new DisaggBackends(
                        DisaggBackends.backend(
                                        new File(tmp, "primary").toURI().toString(),
                                        MemorySize.parse("64kb"))
                                // no warm-up: its reads, done before the restore's count was
                                // taken on a slow machine, would leave the gets nothing to read
                                .with(DisaggregatedOptions.LOCAL_CACHE_WARM_UP, false))) {
            CapturingGroup before = new CapturingGroup("");
            DisaggregatedKeyedStateBackend<Integer> writer =
                    backends.create(DisaggBackends.ALL, List.of(), before);
            writeKeys(writer);
            assertThat(before.longValue("disaggregated.restoreDurationMs")).isZero();
            KeyedStateHandle handle = snapshot(writer);
            IncrementalRemoteKeyedStateHandle inc = (IncrementalRemoteKeyedStateHandle) handle;
            assertThat(before.longValue("disaggregated.flushes")).isPositive();
            assertThat(before.longValue("disaggregated.lastCheckpointFiles"))
                    .isEqualTo(inc.getSharedState().size())
                    .isPositive();
            assertThat(before.longValue("disaggregated.lastCheckpointBytes"))
                    .isEqualTo(inc.getStateSize());
            assertThat(before.longValue("disaggregated.lastCheckpointNewBytes"))
                    .isEqualTo(inc.getCheckpointedSize());
            backends.dispose(writer);

            CapturingGroup after = new CapturingGroup("");
            DisaggregatedKeyedStateBackend<Integer> reader =
                    backends.create(DisaggBackends.ALL, List.of(handle), after);
            long readsAtRestore = after.longValue("disaggregated.primaryReads");
            InternalValueState<Integer, VoidNamespace, String> r = value(reader);
            for (int round = 0; round < 2; round++) {
                for (int k = 0; k < KEYS; k++) {
                    reader.setCurrentKey(k);
                    assertThat(r.value()).startsWith("value-" + k + "-");
                }
            }
            assertThat(after.longValue("disaggregated.primaryReads")).isGreaterThan(readsAtRestore);
            assertThat(after.longValue("disaggregated.primaryBytesRead")).isPositive();
            // the first round finds keys in blocks it has read for their neighbours; the second is
            // answered by the row cache (the slot's default memory leaves it room)
            assertThat(after.longValue("disaggregated.blockCacheHits")).isPositive();
            assertThat(after.longValue("disaggregated.rowCacheHits")).isPositive();
            assertThat(after.longValue("disaggregated.rowCacheRequests"))
                    .isGreaterThanOrEqualTo(after.longValue("disaggregated.rowCacheHits"));
            assertThat(after.longValue("disaggregated.rowCacheRows")).isPositive();
            assertThat(after.longValue("disaggregated.rowCacheBytes")).isPositive();
            assertThat(after.longValue("disaggregated.blockCacheRequests"))
                    .isGreaterThan(after.longValue("disaggregated.blockCacheHits"));
            double ratio = (Double) after.gauge("disaggregated.blockCacheHitRatio").getValue();
            assertThat(ratio).isGreaterThan(0.0).isLessThan(1.0);
            assertThat(after.gauges.keySet())
                    .contains(
                            "disaggregated.restoreDurationMs",
                            "disaggregated.compactions",
                            "disaggregated.lastCompactionDurationMs",
                            "disaggregated.writeAmplification",
                            "disaggregated.ttlEntriesDropped",
                            "disaggregated.prefixTombstones",
                            "disaggregated.level0Stalls",
                            "disaggregated.level0StallTimeMs",
                            "disaggregated.rowCacheHits",
                            "disaggregated.rowCacheRequests",
                            "disaggregated.rowCacheRows",
                            "disaggregated.rowCacheBytes",
                            "disaggregated.rowCacheSlotBytes",
                            "disaggregated.rowCacheBytesYielded");
            assertThat(after.longValue("disaggregated.prefixTombstones")).isZero(); // no clears
        }
    }

    private static InternalValueState<Integer, VoidNamespace, String> value(
            DisaggregatedKeyedStateBackend<Integer> b) throws Exception {
        return (InternalValueState<Integer, VoidNamespace, String>)
                b.getPartitionedState(
                        VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, VALUE);
    }

    private KeyedStateHandle snapshot(DisaggregatedKeyedStateBackend<Integer> b) throws Exception {
        Path chk = new Path(new File(tmp, "chk").toURI());
        FsCheckpointStreamFactory streams =
                new FsCheckpointStreamFactory(
                        FileSystem.getLocalFileSystem(),
                        new Path(chk, "chk-1"),
                        new Path(chk, "shared"),
                        1024,
                        4096);
        KeyedStateHandle h =
                DisaggBackends.snapshot(
                                b, 1, streams, CheckpointOptions.forCheckpointWithDefaultLocation())
                        .getJobManagerOwnedSnapshot();
        b.notifyCheckpointComplete(1);
        return h;
    }

    /** Records every metric registered on it or on its subgroups under its dotted name. */
    private static final class CapturingGroup extends UnregisteredMetricsGroup {
        private final String prefix;
        private final Map<String, Metric> gauges;

        CapturingGroup(String prefix) {
            this(prefix, new ConcurrentHashMap<>());
        }

        private CapturingGroup(String prefix, Map<String, Metric> gauges) {
            this.prefix = prefix;
            this.gauges = gauges;
        }

        @Override
        public MetricGroup addGroup(String name) {
            return new CapturingGroup(prefix + name + ".", gauges);
        }

        @Override
        public <T, G extends Gauge<T>> G gauge(String name, G gauge) {
            gauges.put(prefix + name, gauge);
            return gauge;
        }

        Gauge<?> gauge(String name) {
            assertThat(gauges).containsKey(name);
            return (Gauge<?>) gauges.get(name);
        }

        long longValue(String name) {
            return ((Number) gauge(name).getValue()).longValue();
        }
    }
}
