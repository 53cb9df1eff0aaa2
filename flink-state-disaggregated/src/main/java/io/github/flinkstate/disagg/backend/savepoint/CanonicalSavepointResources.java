package io.github.flinkstate.disagg.backend.savepoint;

import io.github.flinkstate.disagg.backend.RegisteredKvState;
import io.github.flinkstate.disagg.engine.LsmReadSnapshot;
import io.github.flinkstate.disagg.engine.LsmStore;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.FullSnapshotResources;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyValueStateIterator;
import org.apache.flink.runtime.state.StateSnapshotTransformer;
import org.apache.flink.runtime.state.StreamCompressionDecorator;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSnapshotRestoreWrapper;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueStateSnapshot;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.apache.flink.util.IOUtils;

/**
 * What a canonical savepoint of the disaggregated backend reads, captured in the synchronous part
 * of the savepoint (task thread): the state meta infos, an engine read snapshot ({@link
 * LsmStore#readSnapshot()}: the active memtable is frozen, no copy) and a copy of every timer
 * queue. Flink's {@code SavepointSnapshotStrategy} then writes the savepoint in the asynchronous
 * part through {@link #createKVStateIterator()}; writes made after the synchronous part are not in
 * it.
 *
 * <p>A state's snapshot transformer (TTL's {@code cleanupFullSnapshot}) is applied to each stored
 * value, list element and map value, as Flink's backends apply it to their full snapshots.
 *
 * <p>Savepoint state ids are the positions in {@link #getMetaInfoSnapshots()}: the keyed states
 * first, then the timer queues, as Flink's own backends number them.
 *
 * <p>Thread safety: created on the task thread; the iterator and {@link #release()} run on the
 * asynchronous snapshot thread. {@link #release()} unpins the engine view.
 */
public final class CanonicalSavepointResources<K> implements FullSnapshotResources<K> {

    /** How the savepoint writes one keyed state. */
    record KvState(
            int savepointId,
            boolean list,
            boolean map,
            boolean ambiguous,
            StateSnapshotTransformer<byte[]> transformer) {}

    private final TypeSerializer<K> keySerializer;
    private final KeyGroupRange keyGroupRange;
    private final int numberOfKeyGroups;
    private final StreamCompressionDecorator compression;
    private final List<StateMetaInfoSnapshot> metaInfos;
    private final Map<Integer, KvState> kvStatesByEngineId;
    private final List<HeapPriorityQueueStateSnapshot<?>> timers;
    private final LsmReadSnapshot view;

    private CanonicalSavepointResources(
            TypeSerializer<K> keySerializer,
            KeyGroupRange keyGroupRange,
            int numberOfKeyGroups,
            StreamCompressionDecorator compression,
            List<StateMetaInfoSnapshot> metaInfos,
            Map<Integer, KvState> kvStatesByEngineId,
            List<HeapPriorityQueueStateSnapshot<?>> timers,
            LsmReadSnapshot view) {
        this.keySerializer = keySerializer;
        this.keyGroupRange = keyGroupRange;
        this.numberOfKeyGroups = numberOfKeyGroups;
        this.compression = compression;
        this.metaInfos = metaInfos;
        this.kvStatesByEngineId = kvStatesByEngineId;
        this.timers = timers;
        this.view = view;
    }

    /** Captures the resources; call on the task thread, in the savepoint's synchronous part. */
    public static <K> CanonicalSavepointResources<K> capture(
            LsmStore store,
            TypeSerializer<K> keySerializer,
            KeyGroupRange keyGroupRange,
            int numberOfKeyGroups,
            StreamCompressionDecorator compression,
            List<RegisteredKvState> kvStates,
            Map<String, HeapPriorityQueueSnapshotRestoreWrapper<?>> timerQueues)
            throws IOException {
        List<StateMetaInfoSnapshot> metaInfos = new ArrayList<>();
        Map<Integer, KvState> byEngineId = new HashMap<>();
        for (RegisteredKvState s : kvStates) {
            StateDescriptor.Type type = s.metaInfo().getStateType();
            byEngineId.put(
                    s.stateId(),
                    new KvState(
                            metaInfos.size(),
                            type == StateDescriptor.Type.LIST,
                            type == StateDescriptor.Type.MAP,
                            CanonicalKeys.ambiguous(keySerializer, s.namespaceSerializer()),
                            // TTL's cleanup in full snapshots, or none
                            s.metaInfo()
                                    .getStateSnapshotTransformFactory()
                                    .createForSerializedState()
                                    .orElse(null)));
            metaInfos.add(s.metaInfo().snapshot());
        }
        List<HeapPriorityQueueStateSnapshot<?>> timers = new ArrayList<>();
        for (HeapPriorityQueueSnapshotRestoreWrapper<?> q : timerQueues.values()) {
            HeapPriorityQueueStateSnapshot<?> s = q.stateSnapshot();
            timers.add(s);
            metaInfos.add(s.getMetaInfoSnapshot());
        }
        if (metaInfos.size() > Short.MAX_VALUE) {
            throw new IOException(
                    "A canonical savepoint holds at most "
                            + Short.MAX_VALUE
                            + " states, this backend has "
                            + metaInfos.size());
        }
        LsmReadSnapshot view = store.readSnapshot();
        return new CanonicalSavepointResources<>(
                keySerializer.duplicate(),
                keyGroupRange,
                numberOfKeyGroups,
                compression,
                metaInfos,
                byEngineId,
                timers,
                view);
    }

    @Override
    public List<StateMetaInfoSnapshot> getMetaInfoSnapshots() {
        return metaInfos;
    }

    @Override
    public KeyValueStateIterator createKVStateIterator() throws IOException {
        return new CanonicalStateIterator(
                view,
                keyGroupRange,
                new CanonicalKeys(numberOfKeyGroups),
                kvStatesByEngineId,
                timers,
                kvStatesByEngineId.size());
    }

    @Override
    public KeyGroupRange getKeyGroupRange() {
        return keyGroupRange;
    }

    @Override
    public TypeSerializer<K> getKeySerializer() {
        return keySerializer;
    }

    @Override
    public StreamCompressionDecorator getStreamCompressionDecorator() {
        return compression;
    }

    @Override
    public void release() {
        IOUtils.closeQuietly(view);
    }
}
