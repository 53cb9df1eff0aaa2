package io.github.flinkstate.lru.state;

import static io.github.flinkstate.lru.support.KeyedBackendHarness.state;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.lru.backend.LruCacheKeyedStateBackend;
import io.github.flinkstate.lru.support.KeyedBackendHarness;
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.internal.InternalListState;
import org.apache.flink.runtime.state.internal.InternalValueState;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A value written without a read (a blind {@code update}) to an identity a full cache does not hold
 * goes to the delegate the first time and takes a cache slot only when it is written again soon
 * ({@code BlindWriteAdmission}, as for list appends): a cache that never hits then costs a bit test
 * per write instead of an insert, an eviction and a write-back. Every read, checkpoint and restore
 * sees the last value written, whichever path it took.
 */
@Timeout(120)
class BlindValueWritesTest {

    private static final ListStateDescriptor<Long> LIST =
            new ListStateDescriptor<>("list", LongSerializer.INSTANCE);

    private static final ValueStateDescriptor<Long> VALUE =
            new ValueStateDescriptor<>("value", LongSerializer.INSTANCE);

    @TempDir File tmp;

    @ParameterizedTest(name = "delegate {0}")
    @ValueSource(strings = {"hashmap", "rocksdb"})
    void aFullCacheSendsAFirstBlindWriteToTheDelegate_andAdmitsTheNextOne(String delegate)
            throws Exception {
        try (KeyedBackendHarness h = new KeyedBackendHarness(tmp)) {
            LruCacheKeyedStateBackend<Integer> b = h.cached(delegate, 2, null);
            InternalValueState<Integer, VoidNamespace, Long> value = state(b, VALUE);
            for (int key = 0; key < 2; key++) {
                b.setCurrentKey(key);
                value.update(100L + key); // room: cached
            }
            assertThat(b.getCache().blindUpdatesRefused()).isZero();

            b.setCurrentKey(7);
            value.update(1L); // full: not admitted, written to the delegate, nothing evicted
            assertThat(b.getCache().blindUpdatesRefused()).isEqualTo(1);
            assertThat(b.getCache().evictions()).isZero();
            assertThat(b.getCache().liveEntries(e -> e.key().equals(7))).isEmpty();

            b.setCurrentKey(7);
            value.update(2L); // written again soon: admitted, evicts one entry
            assertThat(b.getCache().blindUpdatesRefused()).isEqualTo(1);
            assertThat(b.getCache().evictions()).isEqualTo(1);
            assertThat(b.getCache().liveEntries(e -> e.key().equals(7))).hasSize(1);

            assertThat(read(b, 7)).isEqualTo(2L);
            assertThat(read(b, 0)).isEqualTo(100L);
            assertThat(read(b, 1)).isEqualTo(101L);
            b.getCache().checkInvariants();
        }
    }

    /** A list {@code update} replaces the whole list without reading it: a blind update too. */
    @ParameterizedTest(name = "delegate {0}")
    @ValueSource(strings = {"hashmap", "rocksdb"})
    void aListUpdateIntoAFullCache_goesToTheDelegateFirst(String delegate) throws Exception {
        try (KeyedBackendHarness h = new KeyedBackendHarness(tmp)) {
            LruCacheKeyedStateBackend<Integer> b = h.cached(delegate, 2, null);
            InternalListState<Integer, VoidNamespace, Long> list = state(b, LIST);
            for (int key = 0; key < 2; key++) {
                b.setCurrentKey(key);
                list.update(List.of(1L, 2L)); // room: cached
            }
            b.setCurrentKey(7);
            list.update(List.of(7L, 8L)); // full: not admitted, replaces the delegate's list
            assertThat(b.getCache().blindUpdatesRefused()).isEqualTo(1);
            assertThat(b.getCache().blindWritesRefused()).as("no append was refused").isZero();
            assertThat(b.getCache().evictions()).isZero();
            b.setCurrentKey(7);
            List<Long> read = new ArrayList<>();
            list.get().forEach(read::add);
            assertThat(read).containsExactly(7L, 8L);
            b.getCache().checkInvariants();
        }
    }

    @ParameterizedTest(name = "delegate {0}")
    @ValueSource(strings = {"hashmap", "rocksdb"})
    void refusedAndAdmittedWritesAllSurviveACheckpoint(String delegate) throws Exception {
        try (KeyedBackendHarness h = new KeyedBackendHarness(tmp)) {
            LruCacheKeyedStateBackend<Integer> b = h.cached(delegate, 4, null);
            InternalValueState<Integer, VoidNamespace, Long> value = state(b, VALUE);
            for (long round = 0; round < 3; round++) {
                for (int key = 0; key < 50; key++) {
                    b.setCurrentKey(key);
                    value.update(round * 1000 + key);
                }
                b.setCurrentKey(3);
                value.clear(); // a delete of an identity that may be cached or not
            }
            assertThat(b.getCache().blindUpdatesRefused()).isPositive();
            KeyedStateHandle handle =
                    h.snapshot(b, CheckpointOptions.forCheckpointWithDefaultLocation());
            for (int cacheSize : new int[] {0, 4, 1_000_000}) {
                LruCacheKeyedStateBackend<Integer> restored = h.cached(delegate, cacheSize, handle);
                for (int key = 0; key < 50; key++) {
                    assertThat(read(restored, key))
                            .as("key %d, cache %d", key, cacheSize)
                            .isEqualTo(key == 3 ? null : 2000L + key);
                }
            }
        }
    }

    private static Long read(AbstractKeyedStateBackend<Integer> b, int key) throws Exception {
        InternalValueState<Integer, VoidNamespace, Long> value = state(b, VALUE);
        b.setCurrentKey(key);
        return value.value();
    }
}
