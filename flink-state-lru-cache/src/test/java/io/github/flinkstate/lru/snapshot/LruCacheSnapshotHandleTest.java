package io.github.flinkstate.lru.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.lru.StateBackendWrapperWithLRUCache;
import io.github.flinkstate.lru.restore.CacheSnapshotRestorer;
import java.io.File;
import java.io.RandomAccessFile;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.RunnableFuture;
import java.util.stream.Stream;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.local.LocalFileSystem;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.metadata.MetadataRoundTrip;
import org.apache.flink.runtime.checkpoint.metadata.MetadataV3Serializer;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.operators.testutils.MockEnvironmentBuilder;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.filesystem.FsCheckpointStreamFactory;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.runtime.state.internal.InternalAggregatingState;
import org.apache.flink.runtime.state.internal.InternalListState;
import org.apache.flink.runtime.state.internal.InternalMapState;
import org.apache.flink.runtime.state.internal.InternalReducingState;
import org.apache.flink.runtime.state.internal.InternalValueState;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The handles the LRU cache backend produces, for every kind of delegate handle: they are Flink's
 * own types, they round-trip through {@link MetadataV3Serializer}, they restore every state kind
 * exactly (also split across two backends, as after rescaling 1 -> 2), and a damaged cache stream
 * fails the restore with a message naming the file.
 */
class LruCacheSnapshotHandleTest {

    private static final int MAX_PARALLELISM = 128;
    private static final int KEYS = 200;

    @TempDir File tmp;
    private final List<AbstractKeyedStateBackend<?>> toDispose = new ArrayList<>();
    private MockEnvironment env;

    static Stream<Arguments> delegates() {
        return Stream.of(
                Arguments.of("rocksdb-incremental", 1_000_000),
                Arguments.of("rocksdb-incremental", 7),
                Arguments.of("rocksdb-full", 1_000_000),
                Arguments.of("hashmap", 1_000_000),
                Arguments.of("hashmap", 7));
    }

    @AfterEach
    void cleanup() throws Exception {
        for (AbstractKeyedStateBackend<?> b : toDispose) {
            b.dispose();
        }
        if (env != null) {
            env.close();
        }
    }

    private StateBackend delegate(String kind) {
        switch (kind) {
            case "hashmap":
                return new HashMapStateBackend();
            case "rocksdb-incremental":
            case "rocksdb-full":
                EmbeddedRocksDBStateBackend rocks =
                        new EmbeddedRocksDBStateBackend(kind.endsWith("incremental"));
                rocks.setDbStoragePath(new File(tmp, "rocks").getAbsolutePath());
                return rocks;
            default:
                throw new IllegalArgumentException(kind);
        }
    }

    @SuppressWarnings("unchecked")
    private AbstractKeyedStateBackend<Integer> create(
            StateBackend backend, KeyGroupRange range, List<KeyedStateHandle> handles)
            throws Exception {
        if (env == null) {
            env = new MockEnvironmentBuilder().setManagedMemorySize(64L << 20).build();
        }
        AbstractKeyedStateBackend<Integer> b =
                (AbstractKeyedStateBackend<Integer>)
                        backend.createKeyedStateBackend(
                                new KeyedStateBackendParametersImpl<>(
                                        env,
                                        new JobID(),
                                        "test-op",
                                        IntSerializer.INSTANCE,
                                        MAX_PARALLELISM,
                                        range,
                                        env.getTaskKvStateRegistry(),
                                        TtlTimeProvider.DEFAULT,
                                        new UnregisteredMetricsGroup(),
                                        handles,
                                        new CloseableRegistry()));
        toDispose.add(b);
        return b;
    }

    private static final ValueStateDescriptor<Long> VALUE =
            new ValueStateDescriptor<>("value", LongSerializer.INSTANCE, null);
    private static final ListStateDescriptor<String> LIST =
            new ListStateDescriptor<>("list", StringSerializer.INSTANCE);
    private static final MapStateDescriptor<Integer, String> MAP =
            new MapStateDescriptor<>("map", IntSerializer.INSTANCE, StringSerializer.INSTANCE);
    private static final ReducingStateDescriptor<Long> REDUCING =
            new ReducingStateDescriptor<>("reducing", Long::sum, LongSerializer.INSTANCE);
    private static final AggregatingStateDescriptor<Long, Long, String> AGGREGATING =
            new AggregatingStateDescriptor<>(
                    "aggregating", new CountAsString(), LongSerializer.INSTANCE);

    /** Writes every state kind for all keys; some values deleted again, one map value null. */
    private static void write(AbstractKeyedStateBackend<Integer> b) throws Exception {
        write(b, KeyGroupRange.of(0, MAX_PARALLELISM - 1));
    }

    private static void write(AbstractKeyedStateBackend<Integer> b, KeyGroupRange range)
            throws Exception {
        InternalValueState<Integer, VoidNamespace, Long> value = state(b, VALUE);
        InternalListState<Integer, VoidNamespace, String> list = state(b, LIST);
        InternalMapState<Integer, VoidNamespace, Integer, String> map = state(b, MAP);
        InternalReducingState<Integer, VoidNamespace, Long> reducing = state(b, REDUCING);
        InternalAggregatingState<Integer, VoidNamespace, Long, Long, String> agg =
                state(b, AGGREGATING);
        for (int k = 0; k < KEYS; k++) {
            if (!range.contains(KeyGroupRangeAssignment.assignToKeyGroup(k, MAX_PARALLELISM))) {
                continue;
            }
            b.setCurrentKey(k);
            value.update((long) k * 10);
            list.add("a" + k);
            list.add("b" + k);
            map.put(1, "one" + k);
            map.put(2, k % 5 == 0 ? null : "two" + k);
            map.put(3, "gone");
            map.remove(3);
            reducing.add((long) k);
            reducing.add(1L);
            agg.add(5L);
            agg.add(6L);
            if (k % 7 == 0) {
                value.clear();
            }
        }
    }

    private static void verify(AbstractKeyedStateBackend<Integer> b, KeyGroupRange range)
            throws Exception {
        InternalValueState<Integer, VoidNamespace, Long> value = state(b, VALUE);
        InternalListState<Integer, VoidNamespace, String> list = state(b, LIST);
        InternalMapState<Integer, VoidNamespace, Integer, String> map = state(b, MAP);
        InternalReducingState<Integer, VoidNamespace, Long> reducing = state(b, REDUCING);
        InternalAggregatingState<Integer, VoidNamespace, Long, Long, String> agg =
                state(b, AGGREGATING);
        int checked = 0;
        for (int k = 0; k < KEYS; k++) {
            if (!range.contains(KeyGroupRangeAssignment.assignToKeyGroup(k, MAX_PARALLELISM))) {
                continue;
            }
            checked++;
            b.setCurrentKey(k);
            assertThat(value.value()).isEqualTo(k % 7 == 0 ? null : (long) k * 10);
            assertThat(list.get()).containsExactly("a" + k, "b" + k);
            assertThat(map.get(1)).isEqualTo("one" + k);
            assertThat(map.contains(2)).isTrue();
            assertThat(map.get(2)).isEqualTo(k % 5 == 0 ? null : "two" + k);
            assertThat(map.contains(3)).isFalse();
            List<Integer> userKeys = new ArrayList<>();
            map.keys().forEach(userKeys::add);
            assertThat(userKeys).containsExactlyInAnyOrder(1, 2);
            assertThat(reducing.get()).isEqualTo((long) k + 1);
            assertThat(agg.get()).isEqualTo("2");
        }
        assertThat(checked).isPositive();
    }

    @SuppressWarnings("unchecked")
    private static <S> S state(
            AbstractKeyedStateBackend<Integer> b,
            org.apache.flink.api.common.state.StateDescriptor<?, ?> d)
            throws Exception {
        return (S)
                b.getPartitionedState(
                        VoidNamespace.INSTANCE,
                        VoidNamespaceSerializer.INSTANCE,
                        (org.apache.flink.api.common.state.StateDescriptor) d);
    }

    private KeyedStateHandle snapshot(AbstractKeyedStateBackend<Integer> b, long checkpointId)
            throws Exception {
        FsCheckpointStreamFactory factory =
                new FsCheckpointStreamFactory(
                        LocalFileSystem.getSharedInstance(),
                        new Path(new File(tmp, "chk").toURI()),
                        new Path(new File(tmp, "shared").toURI()),
                        0,
                        4096);
        new File(tmp, "chk").mkdirs();
        new File(tmp, "shared").mkdirs();
        // a restore resolves relative handles against the checkpoint directory's metadata file
        new File(tmp, "chk/_metadata").createNewFile();
        RunnableFuture<SnapshotResult<KeyedStateHandle>> future =
                b.snapshot(
                        checkpointId,
                        0L,
                        factory,
                        CheckpointOptions.forCheckpointWithDefaultLocation());
        future.run();
        return future.get().getJobManagerOwnedSnapshot();
    }

    private KeyedStateHandle roundTrip(KeyedStateHandle handle) throws Exception {
        return MetadataRoundTrip.roundTrip(handle, new File(tmp, "chk").toURI().toString());
    }

    @ParameterizedTest(name = "{0}, cache {1}")
    @MethodSource("delegates")
    void handleRoundTripsThroughMetadataAndRestoresAfterRescaling(String kind, int cacheSize)
            throws Exception {
        KeyGroupRange all = KeyGroupRange.of(0, MAX_PARALLELISM - 1);
        StateBackendWrapperWithLRUCache backend =
                new StateBackendWrapperWithLRUCache(delegate(kind), cacheSize);
        AbstractKeyedStateBackend<Integer> original = create(backend, all, Collections.emptyList());
        write(original);
        KeyedStateHandle handle = snapshot(original, 1L);

        assertThat(handle).isNotNull();
        // every envelope is an IncrementalRemoteKeyedStateHandle; in Flink 2.x so is the
        // delegate's own handle of a full (non-incremental) RocksDB checkpoint
        assertThat(handle.getClass()).isEqualTo(IncrementalRemoteKeyedStateHandle.class);
        // its meta stream is the guard that makes plain backends refuse it (finding 1)
        assertThat(
                        ((IncrementalRemoteKeyedStateHandle) handle)
                                .getMetaDataStateHandle()
                                .asBytesIfInMemory()
                                .orElseThrow())
                .isEqualTo(PlainRestoreGuard.metaBytes());
        CacheStreamHeader header =
                CacheSnapshotRestorer.readHeader(
                        SnapshotEnvelope.cacheStreamOf(handle), new CloseableRegistry());
        assertThat(header.delegateKind())
                .isEqualTo(
                        kind.startsWith("rocksdb")
                                ? CacheSnapshotFormat.DELEGATE_INCREMENTAL
                                : CacheSnapshotFormat.DELEGATE_KEY_GROUPS);
        assertThat(SnapshotEnvelope.cacheStreamOf(handle))
                .isNotNull(); // dirty entries were written

        KeyedStateHandle restoredHandle = roundTrip(handle);
        assertThat(restoredHandle.getClass()).isEqualTo(handle.getClass());

        // same parallelism
        verify(create(backend, all, List.of(restoredHandle)), all);
        // 1 -> 2: each new subtask gets the intersecting handle and keeps its own key groups
        KeyGroupRange left = KeyGroupRange.of(0, 63);
        KeyGroupRange right = KeyGroupRange.of(64, 127);
        verify(create(backend, left, List.of(restoredHandle.getIntersection(left))), left);
        verify(create(backend, right, List.of(restoredHandle.getIntersection(right))), right);
        // 2 -> 1: snapshots of both halves restore into one backend
        AbstractKeyedStateBackend<Integer> l = create(backend, left, Collections.emptyList());
        AbstractKeyedStateBackend<Integer> r = create(backend, right, Collections.emptyList());
        write(l, left);
        write(r, right);
        List<KeyedStateHandle> halves =
                Arrays.asList(roundTrip(snapshot(l, 2L)), roundTrip(snapshot(r, 3L)));
        verify(create(backend, all, halves), all);
    }

    @ParameterizedTest(name = "{0}, cache {1}")
    @MethodSource("delegates")
    void corruptOrTruncatedCacheStreamFailsRestoreNamingTheFile(String kind, int cacheSize)
            throws Exception {
        KeyGroupRange all = KeyGroupRange.of(0, MAX_PARALLELISM - 1);
        StateBackendWrapperWithLRUCache backend =
                new StateBackendWrapperWithLRUCache(delegate(kind), cacheSize);
        AbstractKeyedStateBackend<Integer> original = create(backend, all, Collections.emptyList());
        write(original);
        KeyedStateHandle handle = snapshot(original, 1L);
        FileStateHandle cacheFile = (FileStateHandle) SnapshotEnvelope.cacheStreamOf(handle);
        File file = new File(cacheFile.getFilePath().toUri());

        try (RandomAccessFile raf = new RandomAccessFile(file, "rw")) {
            raf.setLength(raf.length() - 3);
        }
        assertThatThrownBy(() -> create(backend, all, List.of(handle)))
                .hasStackTraceContaining(file.getName())
                .hasStackTraceContaining("truncated at offset");

        try (RandomAccessFile raf = new RandomAccessFile(file, "rw")) {
            raf.seek(0);
            raf.writeInt(0xBADBAD);
        }
        assertThatThrownBy(() -> create(backend, all, List.of(handle)))
                .hasStackTraceContaining(file.getName())
                .hasStackTraceContaining("magic");

        assertThat(file.delete()).isTrue();
        assertThatThrownBy(() -> create(backend, all, List.of(handle)))
                .hasStackTraceContaining(file.getName());
    }

    /** Counts added elements; result as text. */
    private static final class CountAsString implements AggregateFunction<Long, Long, String> {
        @Override
        public Long createAccumulator() {
            return 0L;
        }

        @Override
        public Long add(Long value, Long acc) {
            return acc + 1;
        }

        @Override
        public String getResult(Long acc) {
            return String.valueOf(acc);
        }

        @Override
        public Long merge(Long a, Long b) {
            return a + b;
        }
    }
}
