package io.github.flinkstate.disagg.backend;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.backend.testutil.DisaggBackends;
import java.io.File;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.RunnableFuture;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.metadata.MetadataRoundTrip;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.filesystem.FsCheckpointStreamFactory;
import org.apache.flink.runtime.state.internal.InternalListState;
import org.apache.flink.runtime.state.internal.InternalMapState;
import org.apache.flink.runtime.state.internal.InternalValueState;
import org.apache.flink.streaming.api.operators.TimerHeapInternalTimer;
import org.apache.flink.streaming.api.operators.TimerSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The handles the disaggregated backend produces: Flink's {@link IncrementalRemoteKeyedStateHandle}
 * naming the engine files where they are, surviving {@code MetadataV3Serializer}, and restoring
 * every state kind and the timers exactly, also rescaled 1 -> 2 -> 1 (the same files arriving
 * through two handles).
 */
class DisaggregatedHandleTest {

    private static final int MAX_PARALLELISM = 128;
    private static final int KEYS = 300;

    private static final ValueStateDescriptor<Long> VALUE =
            new ValueStateDescriptor<>("value", LongSerializer.INSTANCE);
    private static final ListStateDescriptor<String> LIST =
            new ListStateDescriptor<>("list", StringSerializer.INSTANCE);
    private static final MapStateDescriptor<Integer, String> MAP =
            new MapStateDescriptor<>("map", IntSerializer.INSTANCE, StringSerializer.INSTANCE);
    private static final TimerSerializer<Integer, VoidNamespace> TIMERS =
            new TimerSerializer<>(IntSerializer.INSTANCE, VoidNamespaceSerializer.INSTANCE);

    @TempDir File tmp;
    private DisaggBackends backends;
    private long checkpointId;

    @AfterEach
    void cleanup() throws Exception {
        if (backends != null) {
            backends.close();
        }
    }

    private AbstractKeyedStateBackend<Integer> create(
            KeyGroupRange range, List<KeyedStateHandle> handles) throws Exception {
        if (backends == null) {
            backends =
                    new DisaggBackends(
                            DisaggBackends.backend(
                                    new File(tmp, "primary").toURI().toString(),
                                    MemorySize.parse("4mb")));
        }
        return backends.create(range, handles);
    }

    private KeyedStateHandle snapshotAndRoundTrip(AbstractKeyedStateBackend<Integer> b)
            throws Exception {
        File chkDir = new File(tmp, "chk");
        Path chk = new Path(chkDir.toURI());
        File exclusive = new File(chkDir, "chk-" + (checkpointId + 1));
        exclusive.mkdirs();
        new File(exclusive, "_metadata").createNewFile(); // what a restore's pointer resolves
        FsCheckpointStreamFactory streams =
                new FsCheckpointStreamFactory(
                        FileSystem.getLocalFileSystem(),
                        new Path(chk, "chk-" + (++checkpointId)),
                        new Path(chk, "shared"),
                        1024,
                        4096);
        RunnableFuture<SnapshotResult<KeyedStateHandle>> f =
                b.snapshot(
                        checkpointId,
                        0,
                        streams,
                        CheckpointOptions.forCheckpointWithDefaultLocation());
        f.run();
        KeyedStateHandle handle = f.get().getJobManagerOwnedSnapshot();
        assertThat(handle).isExactlyInstanceOf(IncrementalRemoteKeyedStateHandle.class);
        for (HandleAndLocalPath e : ((IncrementalRemoteKeyedStateHandle) handle).getSharedState()) {
            assertThat(e.getHandle()).isInstanceOf(FileStateHandle.class);
            assertThat(((FileStateHandle) e.getHandle()).getFilePath().toString())
                    .contains("primary")
                    .endsWith(e.getLocalPath());
        }
        KeyedStateHandle back =
                MetadataRoundTrip.roundTrip(handle, new Path(exclusive.toURI()).toString());
        assertThat(back).isExactlyInstanceOf(IncrementalRemoteKeyedStateHandle.class);
        assertThat(((IncrementalRemoteKeyedStateHandle) back).getSharedState())
                .isEqualTo(((IncrementalRemoteKeyedStateHandle) handle).getSharedState());
        b.notifyCheckpointComplete(checkpointId);
        return back;
    }

    private static void write(AbstractKeyedStateBackend<Integer> b) throws Exception {
        InternalValueState<Integer, VoidNamespace, Long> value =
                b.createOrUpdateInternalState(VoidNamespaceSerializer.INSTANCE, VALUE);
        InternalListState<Integer, VoidNamespace, String> list =
                b.createOrUpdateInternalState(VoidNamespaceSerializer.INSTANCE, LIST);
        InternalMapState<Integer, VoidNamespace, Integer, String> map =
                b.createOrUpdateInternalState(VoidNamespaceSerializer.INSTANCE, MAP);
        KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<Integer, VoidNamespace>> timers =
                b.create("timers", TIMERS);
        value.setCurrentNamespace(VoidNamespace.INSTANCE);
        list.setCurrentNamespace(VoidNamespace.INSTANCE);
        map.setCurrentNamespace(VoidNamespace.INSTANCE);
        for (int k = 0; k < KEYS; k++) {
            b.setCurrentKey(k);
            value.update((long) k * 10);
            list.add("a" + k);
            list.add("b" + k);
            map.put(1, "one" + k);
            map.put(2, k % 5 == 0 ? null : "two" + k);
            timers.add(new TimerHeapInternalTimer<>(1000L + k, k, VoidNamespace.INSTANCE));
            if (k % 7 == 0) {
                value.clear();
            }
        }
    }

    private static void verify(AbstractKeyedStateBackend<Integer> b, KeyGroupRange range)
            throws Exception {
        InternalValueState<Integer, VoidNamespace, Long> value =
                b.createOrUpdateInternalState(VoidNamespaceSerializer.INSTANCE, VALUE);
        InternalListState<Integer, VoidNamespace, String> list =
                b.createOrUpdateInternalState(VoidNamespaceSerializer.INSTANCE, LIST);
        InternalMapState<Integer, VoidNamespace, Integer, String> map =
                b.createOrUpdateInternalState(VoidNamespaceSerializer.INSTANCE, MAP);
        KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<Integer, VoidNamespace>> timers =
                b.create("timers", TIMERS);
        value.setCurrentNamespace(VoidNamespace.INSTANCE);
        list.setCurrentNamespace(VoidNamespace.INSTANCE);
        map.setCurrentNamespace(VoidNamespace.INSTANCE);
        int inRange = 0;
        for (int k = 0; k < KEYS; k++) {
            if (!range.contains(KeyGroupRangeAssignment.assignToKeyGroup(k, MAX_PARALLELISM))) {
                continue;
            }
            inRange++;
            b.setCurrentKey(k);
            assertThat(value.value()).isEqualTo(k % 7 == 0 ? null : (long) k * 10);
            assertThat(list.get()).containsExactly("a" + k, "b" + k);
            assertThat(map.get(1)).isEqualTo("one" + k);
            assertThat(map.get(2)).isEqualTo(k % 5 == 0 ? null : "two" + k);
            assertThat(map.contains(2)).isTrue();
        }
        assertThat(timers.size()).isEqualTo(inRange);
        assertThat(b.getKeys("list", VoidNamespace.INSTANCE).count()).isEqualTo(inRange);
    }

    @Test
    void handle_roundTripsMetadata_andRestoresRescaled_1_2_1() throws Exception {
        KeyGroupRange all = KeyGroupRange.of(0, MAX_PARALLELISM - 1);
        AbstractKeyedStateBackend<Integer> source = create(all, List.of());
        write(source);
        KeyedStateHandle h = snapshotAndRoundTrip(source);
        verify(create(all, List.of(h)), all);

        KeyGroupRange left = KeyGroupRange.of(0, 63);
        KeyGroupRange right = KeyGroupRange.of(64, 127);
        AbstractKeyedStateBackend<Integer> l = create(left, List.of(h));
        AbstractKeyedStateBackend<Integer> r = create(right, List.of(h));
        verify(l, left);
        verify(r, right);
        assertThat(((DisaggregatedKeyedStateBackend<Integer>) l).store().stats().userBytesWritten())
                .as("a restore and reads write nothing")
                .isZero();
        KeyedStateHandle hl = snapshotAndRoundTrip(l);
        KeyedStateHandle hr = snapshotAndRoundTrip(r);

        AbstractKeyedStateBackend<Integer> merged = create(all, List.of(hl, hr));
        verify(merged, all);
        Set<String> named = new HashSet<>();
        for (KeyedStateHandle x : List.of(hl, hr)) {
            for (HandleAndLocalPath e : ((IncrementalRemoteKeyedStateHandle) x).getSharedState()) {
                named.add(((FileStateHandle) e.getHandle()).getFilePath().toString());
            }
        }
        List<String> live = ((DisaggregatedKeyedStateBackend<Integer>) merged).store().liveFiles();
        assertThat(new HashSet<>(live))
                .as("the merged store reads the files of both handles in place")
                .isEqualTo(named);
    }
}
