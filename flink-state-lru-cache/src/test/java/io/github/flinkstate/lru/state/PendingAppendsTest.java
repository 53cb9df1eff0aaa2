package io.github.flinkstate.lru.state;

import static io.github.flinkstate.lru.support.KeyedBackendHarness.state;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.lru.backend.LruCacheKeyedStateBackend;
import io.github.flinkstate.lru.cow.CacheEntry;
import io.github.flinkstate.lru.support.KeyedBackendHarness;
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RunnableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.ListSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.queryablestate.client.state.serialization.KvStateSerializer;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.internal.InternalListState;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Appends to a list the cache has not read are cached as pending appends, without reading the
 * delegate: reads, write-back (eviction and flush), checkpoints (append records), restores,
 * snapshot isolation and queryable state see the delegate's list followed by the appended elements,
 * exactly once.
 */
@Timeout(120)
class PendingAppendsTest {

    private static final ListStateDescriptor<Long> LIST =
            new ListStateDescriptor<>("list", LongSerializer.INSTANCE);

    @TempDir File tmp;

    @ParameterizedTest(name = "delegate {0}")
    @ValueSource(strings = {"hashmap", "rocksdb"})
    void appendsWithoutReadingAndEveryPathSeesTheWholeList(String delegate) throws Exception {
        try (KeyedBackendHarness h = new KeyedBackendHarness(tmp)) {
            // key 1 holds [1, 2] in the delegate only: written by the plain delegate, restored
            AbstractKeyedStateBackend<Integer> plain =
                    h.create(KeyedBackendHarness.delegate(delegate, tmp), List.of());
            InternalListState<Integer, VoidNamespace, Long> plainList = state(plain, LIST);
            plain.setCurrentKey(1);
            plainList.addAll(List.of(1L, 2L));
            KeyedStateHandle plainHandle = checkpoint(h, plain);

            LruCacheKeyedStateBackend<Integer> b = h.cached(delegate, 1_000_000, plainHandle);
            InternalListState<Integer, VoidNamespace, Long> list = state(b, LIST);
            b.setCurrentKey(1);
            list.add(3L);
            list.addAll(List.of(4L, 5L));
            b.setCurrentKey(2);
            list.add(10L);
            assertThat(b.statistics().misses()).as("appends read nothing").isZero();
            assertThat(b.getCache().liveEntries(CacheEntry::isDirty)).hasSize(2);

            // queryable state on another thread: the delegate's list, then the appends
            assertThat(queried(list, 1)).containsExactly(1L, 2L, 3L, 4L, 5L);
            assertThat(queried(list, 2)).containsExactly(10L);

            // a checkpoint holds append records; a restore with and without the cache
            KeyedStateHandle handle = checkpoint(h, b);
            for (int cacheSize : new int[] {0, 3, 1_000_000}) {
                LruCacheKeyedStateBackend<Integer> restored = h.cached(delegate, cacheSize, handle);
                assertThat(read(restored, 1)).containsExactly(1L, 2L, 3L, 4L, 5L);
                assertThat(read(restored, 2)).containsExactly(10L);
            }

            // a read completes the entry once; later appends go to the whole list
            assertThat(read(b, 1)).containsExactly(1L, 2L, 3L, 4L, 5L);
            b.setCurrentKey(1);
            list.add(6L);
            assertThat(read(b, 1)).containsExactly(1L, 2L, 3L, 4L, 5L, 6L);

            // a flush writes pending appends to the delegate once and drops the entry
            b.setCurrentKey(3);
            list.add(7L);
            b.numKeyValueStateEntries();
            assertThat(b.getCache().liveEntries(e -> e.key().equals(3))).isEmpty();
            assertThat(read(b, 3)).containsExactly(7L);
            assertThat(read(b, 2)).containsExactly(10L);

            // update and clear replace pending appends
            b.setCurrentKey(4);
            list.add(1L);
            list.update(List.of(40L));
            b.setCurrentKey(5);
            list.add(1L);
            list.clear();
            assertThat(read(b, 4)).containsExactly(40L);
            assertThat(read(b, 5)).isEmpty();
            b.getCache().checkInvariants();
        }
    }

    @ParameterizedTest(name = "delegate {0}")
    @ValueSource(strings = {"hashmap", "rocksdb"})
    void evictionAppendsToTheDelegatesListInOrder(String delegate) throws Exception {
        try (KeyedBackendHarness h = new KeyedBackendHarness(tmp)) {
            LruCacheKeyedStateBackend<Integer> b = h.cached(delegate, 2, null);
            InternalListState<Integer, VoidNamespace, Long> list = state(b, LIST);
            for (long round = 0; round < 4; round++) {
                for (int key = 0; key < 5; key++) {
                    b.setCurrentKey(key);
                    list.add(round * 10 + key);
                }
            }
            // a full cache refuses first appends (they go to the delegate) and admits repeated
            // ones (which evict): both paths append in order
            assertThat(b.getCache().blindWritesRefused()).isPositive();
            assertThat(b.getCache().evictions()).isPositive();
            for (int key = 0; key < 5; key++) {
                assertThat(read(b, key)).containsExactly(0L + key, 10L + key, 20L + key, 30L + key);
            }
            b.getCache().checkInvariants();
        }
    }

    @ParameterizedTest(name = "delegate {0}")
    @ValueSource(strings = {"hashmap", "rocksdb"})
    void aFullCacheSendsAFirstAppendToTheDelegate_andAdmitsTheNextOne(String delegate)
            throws Exception {
        try (KeyedBackendHarness h = new KeyedBackendHarness(tmp)) {
            LruCacheKeyedStateBackend<Integer> b = h.cached(delegate, 2, null);
            InternalListState<Integer, VoidNamespace, Long> list = state(b, LIST);
            for (int key = 0; key < 2; key++) {
                b.setCurrentKey(key);
                list.add(100L + key); // room: cached as pending appends
            }
            assertThat(b.getCache().blindWritesRefused()).isZero();

            b.setCurrentKey(7);
            list.add(1L); // full: not admitted, appended to the delegate, nothing evicted
            assertThat(b.getCache().blindWritesRefused()).isEqualTo(1);
            assertThat(b.getCache().evictions()).isZero();
            assertThat(b.getCache().liveEntries(e -> e.key().equals(7))).isEmpty();

            b.setCurrentKey(7);
            list.addAll(List.of(2L, 3L)); // appended again soon: admitted, evicts one entry
            assertThat(b.getCache().blindWritesRefused()).isEqualTo(1);
            assertThat(b.getCache().evictions()).isEqualTo(1);
            assertThat(b.getCache().liveEntries(e -> e.key().equals(7))).hasSize(1);

            assertThat(read(b, 7)).containsExactly(1L, 2L, 3L);
            assertThat(read(b, 0)).containsExactly(100L);
            assertThat(read(b, 1)).containsExactly(101L);
            b.getCache().checkInvariants();
        }
    }

    @ParameterizedTest(name = "delegate {0}")
    @ValueSource(strings = {"hashmap", "rocksdb"})
    void appendsAfterTheSynchronousPhaseAreNotInTheCheckpoint(String delegate) throws Exception {
        try (KeyedBackendHarness h = new KeyedBackendHarness(tmp)) {
            LruCacheKeyedStateBackend<Integer> b = h.cached(delegate, 1_000_000, null);
            InternalListState<Integer, VoidNamespace, Long> list = state(b, LIST);
            b.setCurrentKey(1);
            list.add(1L);
            RunnableFuture<SnapshotResult<KeyedStateHandle>> running = h.startCheckpoint(b, 1L);
            list.add(2L); // after the barrier: must not reach the running checkpoint
            running.run();
            KeyedStateHandle handle = h.finish(running.get(), 1L);

            assertThat(read(b, 1)).containsExactly(1L, 2L);
            assertThat(read(h.cached(delegate, 1_000_000, handle), 1)).containsExactly(1L);
        }
    }

    // ------------------------------------------------------------------------------------------

    private static KeyedStateHandle checkpoint(
            KeyedBackendHarness h, AbstractKeyedStateBackend<Integer> b) throws Exception {
        return h.snapshot(b, CheckpointOptions.forCheckpointWithDefaultLocation());
    }

    private static List<Long> read(AbstractKeyedStateBackend<Integer> b, int key) throws Exception {
        InternalListState<Integer, VoidNamespace, Long> list = state(b, LIST);
        b.setCurrentKey(key);
        List<Long> out = new ArrayList<>();
        Iterable<Long> stored = list.get();
        if (stored != null) {
            stored.forEach(out::add);
        }
        return out;
    }

    private static List<Long> queried(InternalListState<Integer, VoidNamespace, Long> list, int key)
            throws Exception {
        byte[] keyAndNamespace =
                KvStateSerializer.serializeKeyAndNamespace(
                        key,
                        IntSerializer.INSTANCE,
                        VoidNamespace.INSTANCE,
                        VoidNamespaceSerializer.INSTANCE);
        byte[] bytes =
                CompletableFuture.supplyAsync(
                                () -> {
                                    try {
                                        return list.getSerializedValue(
                                                keyAndNamespace,
                                                IntSerializer.INSTANCE,
                                                VoidNamespaceSerializer.INSTANCE,
                                                new ListSerializer<>(LongSerializer.INSTANCE));
                                    } catch (Exception e) {
                                        throw new RuntimeException(e);
                                    }
                                })
                        .get(30, TimeUnit.SECONDS);
        return KvStateSerializer.deserializeList(bytes, LongSerializer.INSTANCE);
    }
}
