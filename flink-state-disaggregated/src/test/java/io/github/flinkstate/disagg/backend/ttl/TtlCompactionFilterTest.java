package io.github.flinkstate.disagg.backend.ttl;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.backend.DisaggregatedKeyedStateBackend;
import io.github.flinkstate.disagg.backend.KeyLayout;
import io.github.flinkstate.disagg.backend.testutil.DisaggBackends;
import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.filesystem.FsCheckpointStreamFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The TTL compaction filter at backend level: after a compaction, expired values, list elements and
 * map entries of states with cleanup in the background are physically gone (entry counts of the
 * backend and of the engine), unexpired ones and states without TTL stay; a checkpoint taken before
 * the compaction still restores everything; a rescaled restore compacts the same way.
 */
@Timeout(120)
class TtlCompactionFilterTest {

    private static final int KEYS = 200;
    private static final long TTL = 100;

    @TempDir File tmp;
    private final AtomicLong time = new AtomicLong();
    private DisaggBackends backends;
    private long checkpointId;

    @AfterEach
    void cleanup() throws Exception {
        if (backends != null) {
            backends.close();
        }
    }

    private DisaggregatedKeyedStateBackend<Integer> create(
            KeyGroupRange range, List<KeyedStateHandle> handles) throws Exception {
        if (backends == null) {
            backends =
                    new DisaggBackends(
                            DisaggBackends.backend(
                                    new File(tmp, "primary").toURI().toString(),
                                    MemorySize.parse("64kb")),
                            time::get);
        }
        return backends.create(range, handles);
    }

    private static StateTtlConfig ttl() {
        return StateTtlConfig.newBuilder(Duration.ofMillis(TTL)).build(); // cleanup in background
    }

    /** The four states of the test, created (and TTL-wrapped) on {@code b}. */
    private static final class States {
        final ValueState<String> value;
        final ListState<String> list;
        final MapState<Integer, String> map;
        final ValueState<String> plain;

        States(DisaggregatedKeyedStateBackend<Integer> b) throws Exception {
            ValueStateDescriptor<String> v =
                    new ValueStateDescriptor<>("v", StringSerializer.INSTANCE);
            v.enableTimeToLive(ttl());
            ListStateDescriptor<String> l =
                    new ListStateDescriptor<>("l", StringSerializer.INSTANCE);
            l.enableTimeToLive(ttl());
            MapStateDescriptor<Integer, String> m =
                    new MapStateDescriptor<>(
                            "m", IntSerializer.INSTANCE, StringSerializer.INSTANCE);
            m.enableTimeToLive(ttl());
            value =
                    b.getPartitionedState(
                            VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, v);
            list =
                    b.getPartitionedState(
                            VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, l);
            map =
                    b.getPartitionedState(
                            VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, m);
            plain =
                    b.getPartitionedState(
                            VoidNamespace.INSTANCE,
                            VoidNamespaceSerializer.INSTANCE,
                            new ValueStateDescriptor<>("plain", StringSerializer.INSTANCE));
        }
    }

    /**
     * At time 0 every key gets value "a", list element "x", map entry 1 and a plain value; at time
     * 50 the even keys get value "b", list element "z" and map entry 2.
     */
    private static void write(DisaggregatedKeyedStateBackend<Integer> b, AtomicLong time)
            throws Exception {
        States s = new States(b);
        time.set(0);
        for (int k = 0; k < KEYS; k++) {
            b.setCurrentKey(k);
            s.value.update("a" + k);
            s.list.add("x" + k);
            s.map.put(1, "y" + k);
            s.plain.update("p" + k);
        }
        time.set(50);
        for (int k = 0; k < KEYS; k += 2) {
            b.setCurrentKey(k);
            s.value.update("b" + k);
            s.list.add("z" + k);
            s.map.put(2, "w" + k);
        }
    }

    /** What every owned key reads at a time between 100 and 150 (after the old entries expired). */
    private static void checkAfterExpiry(DisaggregatedKeyedStateBackend<Integer> b)
            throws Exception {
        States s = new States(b);
        for (int k = 0; k < KEYS; k++) {
            if (!owns(b, k)) {
                continue;
            }
            b.setCurrentKey(k);
            boolean even = k % 2 == 0;
            assertThat(s.value.value()).isEqualTo(even ? "b" + k : null);
            assertThat(list(s.list)).isEqualTo(even ? List.of("z" + k) : List.of());
            assertThat(s.map.get(1)).isNull();
            assertThat(s.map.get(2)).isEqualTo(even ? "w" + k : null);
            assertThat(s.plain.value()).isEqualTo("p" + k);
        }
    }

    private static boolean owns(DisaggregatedKeyedStateBackend<Integer> b, int key) {
        return b.getKeyGroupRange()
                .contains(
                        org.apache.flink.runtime.state.KeyGroupRangeAssignment.assignToKeyGroup(
                                key, DisaggBackends.MAX_PARALLELISM));
    }

    private static List<String> list(ListState<String> l) throws Exception {
        List<String> out = new ArrayList<>();
        Iterable<String> it = l.get();
        if (it != null) {
            it.forEach(out::add);
        }
        return out;
    }

    private KeyedStateHandle checkpoint(DisaggregatedKeyedStateBackend<Integer> b)
            throws Exception {
        Path chk = new Path(new File(tmp, "chk").toURI());
        FsCheckpointStreamFactory streams =
                new FsCheckpointStreamFactory(
                        FileSystem.getLocalFileSystem(),
                        new Path(chk, "chk-" + (++checkpointId)),
                        new Path(chk, "shared"),
                        1024,
                        4096);
        return DisaggBackends.snapshot(
                        b,
                        checkpointId,
                        streams,
                        CheckpointOptions.forCheckpointWithDefaultLocation())
                .getJobManagerOwnedSnapshot();
    }

    @Test
    void compaction_removesExpiredValuesListElementsAndMapEntries() throws Exception {
        DisaggregatedKeyedStateBackend<Integer> b = create(DisaggBackends.ALL, List.of());
        write(b, time);
        for (String state : List.of("v", "l", "m")) {
            assertThat(b.ttlFilters().filters(KeyLayout.stateId(state))).as(state).isTrue();
        }
        assertThat(b.ttlFilters().filters(KeyLayout.stateId("plain"))).isFalse();
        // value 200 + list pairs 200 + map entries 300 + plain 200
        assertThat(b.numKeyValueStateEntries()).isEqualTo(900);

        time.set(120); // everything written at 0 has expired, what was written at 50 has not
        b.compactAll();

        // value 100 + list pairs 100 + map entries 100 + plain 200: nothing else is stored
        assertThat(b.numKeyValueStateEntries()).isEqualTo(500);
        assertThat(b.store().storedEntries()).as("physical engine entries").isEqualTo(500);
        assertThat(b.store().stats().entriesFiltered()).isGreaterThanOrEqualTo(500);
        checkAfterExpiry(b);

        time.set(200);
        b.compactAll();
        assertThat(b.store().storedEntries()).as("only the state without TTL").isEqualTo(KEYS);
    }

    @Test
    void checkpointBeforeCompaction_keepsExpiredEntries_andARescaledRestoreCompactsThemAway()
            throws Exception {
        DisaggregatedKeyedStateBackend<Integer> b = create(DisaggBackends.ALL, List.of());
        write(b, time);
        KeyedStateHandle before = checkpoint(b);
        time.set(120);
        b.compactAll();
        assertThat(b.store().storedEntries()).isEqualTo(500);
        backends.dispose(b);

        // the checkpoint's files are immutable: back at time 60, everything written is there
        time.set(60);
        DisaggregatedKeyedStateBackend<Integer> restored =
                create(DisaggBackends.ALL, List.of(before));
        assertThat(restored.numKeyValueStateEntries()).isEqualTo(900);
        States s = new States(restored);
        restored.setCurrentKey(1);
        assertThat(s.value.value()).isEqualTo("a1");
        assertThat(list(s.list)).containsExactly("x1");
        restored.setCurrentKey(2);
        assertThat(list(s.list)).containsExactly("x2", "z2");
        backends.dispose(restored);

        // rescaled 1 -> 2 at time 120: each half drops the expired entries and the foreign keys
        time.set(120);
        long stored = 0;
        for (KeyGroupRange range : DisaggBackends.ranges(2)) {
            DisaggregatedKeyedStateBackend<Integer> half = create(range, List.of(before));
            new States(half); // registers the states: their rules are installed
            half.compactAll();
            assertThat(half.store().storedEntries()).isEqualTo(half.numKeyValueStateEntries());
            stored += half.store().storedEntries();
            checkAfterExpiry(half);
        }
        assertThat(stored).isEqualTo(500);
    }

    /**
     * A compaction that the last of several flushes starts in the background reads the clock before
     * it expires anything; the full compaction that follows must still apply the filter at its own
     * time to what that compaction wrote.
     */
    @Test
    void compactAll_filtersTheOutputOfABackgroundCompactionStartedEarlier() throws Exception {
        DisaggregatedKeyedStateBackend<Integer> b = create(DisaggBackends.ALL, List.of());
        States s = new States(b);
        time.set(0);
        for (int k = 0; k < KEYS; k++) {
            b.setCurrentKey(k);
            s.value.update("a" + k);
            if (k % 50 == 49) {
                b.store().flush(); // four L0 files: the last flush starts a compaction
            }
        }
        time.set(120);
        b.compactAll();
        assertThat(b.store().storedEntries()).isZero();
    }

    @Test
    void restoredStatesAreNotFiltered_untilRegistered() throws Exception {
        DisaggregatedKeyedStateBackend<Integer> b = create(DisaggBackends.ALL, List.of());
        write(b, time);
        KeyedStateHandle before = checkpoint(b);
        backends.dispose(b);

        time.set(500);
        DisaggregatedKeyedStateBackend<Integer> restored =
                create(DisaggBackends.ALL, List.of(before));
        restored.compactAll(); // no state registered yet: the TTL of the restored ones is unknown
        // nothing filtered, only the overwritten values dropped: value 200 + list elements 300 +
        // map entries 300 + plain 200
        assertThat(restored.store().storedEntries()).isEqualTo(1000);
        assertThat(restored.store().stats().entriesFiltered()).isZero();
        new States(restored);
        restored.compactAll();
        assertThat(restored.store().storedEntries()).isEqualTo(KEYS);
    }
}
