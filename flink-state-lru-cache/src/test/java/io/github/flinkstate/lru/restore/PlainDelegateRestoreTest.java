package io.github.flinkstate.lru.restore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.lru.StateBackendWrapperWithLRUCache;
import io.github.flinkstate.lru.support.KeyedBackendHarness;
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.SavepointType;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.runtime.state.internal.InternalValueState;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A user turns the cache off by restoring a retained checkpoint or native savepoint of the LRU
 * cache with the plain delegate backend (issue 12, finding 1). The restore must either bring back
 * every value or fail with a message that says what to do; it must never silently lose the entries
 * that were still only in the cache. The supported way to turn the cache off (max entries 0 with
 * the cache's factory) restores everything.
 */
@Timeout(120)
class PlainDelegateRestoreTest {

    private static final int KEYS = 1000;
    private static final ValueStateDescriptor<Long> COUNT =
            new ValueStateDescriptor<>("count", LongSerializer.INSTANCE);

    @TempDir File tmp;
    private KeyedBackendHarness harness;

    /** Checkpoint kind x share of keys written back to the delegate before the snapshot. */
    static Stream<Arguments> cases() {
        List<Arguments> cases = new ArrayList<>();
        for (String kind :
                List.of("rocksdb-incremental", "rocksdb-full", "rocksdb-native-savepoint")) {
            cases.add(Arguments.of(kind, false));
            cases.add(Arguments.of(kind, true));
        }
        return cases.stream();
    }

    @BeforeEach
    void setUp() {
        harness = new KeyedBackendHarness(tmp);
    }

    @AfterEach
    void cleanup() throws Exception {
        harness.close();
    }

    @ParameterizedTest(name = "{0}, half written back: {1}")
    @MethodSource("cases")
    void plainRocksDbRestoreOfCacheCheckpointFailsSayingWhatToDo(
            String kind, boolean halfWrittenBack) throws Exception {
        AbstractKeyedStateBackend<Integer> cached =
                create(new StateBackendWrapperWithLRUCache(rocks(kind), 1_000_000), List.of());
        writeCounts(cached, halfWrittenBack);
        KeyedStateHandle handle = snapshot(cached, kind.endsWith("savepoint"));

        // The design (docs/lru-cache.md): the envelope's meta stream makes any other backend
        // fail with a message saying what to do; a silent partial restore is never possible.
        assertThatThrownBy(() -> create(rocks(kind), List.of(handle)))
                .hasStackTraceContaining("LRU cache state backend")
                .hasStackTraceContaining("canonical savepoint")
                .hasStackTraceContaining("state.backend.cache.max-entries-num: 0");
    }

    @ParameterizedTest(name = "{0}, half written back: {1}")
    @MethodSource("cases")
    void cacheWithZeroEntriesRestoresEverythingAndThenWritesPlainSnapshots(
            String kind, boolean halfWrittenBack) throws Exception {
        AbstractKeyedStateBackend<Integer> cached =
                create(new StateBackendWrapperWithLRUCache(rocks(kind), 1_000_000), List.of());
        writeCounts(cached, halfWrittenBack);
        KeyedStateHandle handle = snapshot(cached, kind.endsWith("savepoint"));

        AbstractKeyedStateBackend<Integer> passThrough =
                create(new StateBackendWrapperWithLRUCache(rocks(kind), 0), List.of(handle));
        assertCounts(passThrough);
        // with the cache off, the next snapshot is the delegate's own and plain RocksDB reads it
        KeyedStateHandle plainHandle = snapshot(passThrough, kind.endsWith("savepoint"));
        assertCounts(create(rocks(kind), List.of(plainHandle)));
    }

    @ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.ValueSource(
            strings = {"rocksdb-incremental", "rocksdb-full", "rocksdb-native-savepoint"})
    void snapshotWithoutChangedCacheEntriesIsTheDelegatesOwn(String kind) throws Exception {
        AbstractKeyedStateBackend<Integer> cached =
                create(new StateBackendWrapperWithLRUCache(rocks(kind), 1_000_000), List.of());
        writeCounts(cached, false);
        cached.numKeyValueStateEntries(); // writes every changed entry to the delegate
        KeyedStateHandle handle = snapshot(cached, kind.endsWith("savepoint"));
        assertCounts(create(rocks(kind), List.of(handle)));
    }

    @ParameterizedTest(name = "half written back: {0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
    void plainHashMapRestoreOfCacheCheckpointFailsClearly(boolean halfWrittenBack)
            throws Exception {
        AbstractKeyedStateBackend<Integer> cached =
                create(
                        new StateBackendWrapperWithLRUCache(new HashMapStateBackend(), 1_000_000),
                        List.of());
        writeCounts(cached, halfWrittenBack);
        KeyedStateHandle handle = snapshot(cached, false);
        try {
            assertCounts(create(new HashMapStateBackend(), List.of(handle)));
        } catch (AssertionError e) {
            throw e;
        } catch (Exception e) {
            assertThat(e).hasStackTraceContaining("IncrementalRemoteKeyedStateHandle");
        }
    }

    // ------------------------------------------------------------------------------------------

    private EmbeddedRocksDBStateBackend rocks(String kind) {
        EmbeddedRocksDBStateBackend rocks =
                new EmbeddedRocksDBStateBackend(!kind.equals("rocksdb-full"));
        rocks.setDbStoragePath(new File(tmp, "rocks").getAbsolutePath());
        return rocks;
    }

    /**
     * Counts 1..KEYS; with halfWrittenBack, the even keys reach the delegate before the odd keys
     * are written, so half the state is in the delegate and half only in the cache.
     */
    private static void writeCounts(AbstractKeyedStateBackend<Integer> b, boolean halfWrittenBack)
            throws Exception {
        InternalValueState<Integer, VoidNamespace, Long> count = state(b);
        for (int k = 0; k < KEYS; k += halfWrittenBack ? 2 : 1) {
            b.setCurrentKey(k);
            count.update((long) k + 1);
        }
        if (halfWrittenBack) {
            // getKeys writes this state's changed entries to the delegate first
            try (Stream<Integer> keys = b.getKeys(COUNT.getName(), VoidNamespace.INSTANCE)) {
                assertThat(keys.count()).isEqualTo(KEYS / 2);
            }
            for (int k = 1; k < KEYS; k += 2) {
                b.setCurrentKey(k);
                count.update((long) k + 1);
            }
        }
    }

    private static void assertCounts(AbstractKeyedStateBackend<Integer> b) throws Exception {
        InternalValueState<Integer, VoidNamespace, Long> count = state(b);
        int found = 0;
        for (int k = 0; k < KEYS; k++) {
            b.setCurrentKey(k);
            Long v = count.value();
            if (v != null && v == k + 1) {
                found++;
            }
        }
        assertThat(found).as("values restored exactly").isEqualTo(KEYS);
    }

    private static InternalValueState<Integer, VoidNamespace, Long> state(
            AbstractKeyedStateBackend<Integer> b) throws Exception {
        return KeyedBackendHarness.state(b, COUNT);
    }

    private AbstractKeyedStateBackend<Integer> create(
            StateBackend backend, List<KeyedStateHandle> handles) throws Exception {
        return harness.create(backend, handles);
    }

    /** Snapshots and round-trips the handle through checkpoint metadata, as a real restore does. */
    private KeyedStateHandle snapshot(AbstractKeyedStateBackend<Integer> b, boolean nativeSavepoint)
            throws Exception {
        CheckpointOptions options =
                nativeSavepoint
                        ? new CheckpointOptions(
                                SavepointType.savepoint(SavepointFormatType.NATIVE),
                                CheckpointStorageLocationReference.getDefault())
                        : CheckpointOptions.forCheckpointWithDefaultLocation();
        return harness.snapshot(b, options);
    }
}
