package io.github.flinkstate.lru.snapshot;

import io.github.flinkstate.lru.cow.CacheEntry;
import io.github.flinkstate.lru.cow.CowSnapshot;
import io.github.flinkstate.lru.state.PendingAppends;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.core.memory.DataOutputViewStreamWrapper;
import org.apache.flink.runtime.state.CheckpointStateOutputStream;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.CheckpointedStateScope;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeOffsets;
import org.apache.flink.runtime.state.KeyedBackendSerializationProxy;
import org.apache.flink.runtime.state.StateSnapshotTransformer;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.util.IOUtils;

/**
 * Writes the dirty entries of a {@link CowSnapshot} as one cache snapshot stream (format: {@link
 * CacheSnapshotFormat}), grouped by key group.
 *
 * <p>Runs in the asynchronous part of a checkpoint; reads only frozen entries and the duplicated
 * serializers of {@link SnapshotStates}. Not thread-safe; one instance per snapshot.
 */
public final class CacheSnapshotWriter {

    private final CowSnapshot frozen;
    private final SnapshotStates states;
    private final KeyGroupRange keyGroupRange;

    public CacheSnapshotWriter(CowSnapshot frozen, SnapshotStates states, KeyGroupRange range) {
        this.frozen = frozen;
        this.states = states;
        this.keyGroupRange = range;
    }

    /** The dirty entries per key group (index = key group - first key group); null if none. */
    @SuppressWarnings("unchecked")
    private List<CacheEntry>[] dirtyEntriesByKeyGroup() {
        List<CacheEntry>[] byKeyGroup = new List[keyGroupRange.getNumberOfKeyGroups()];
        int[] count = {0};
        frozen.forEach(
                e -> {
                    if (e.isDirty() && states.infoOf(e.owner()) != null) {
                        int idx = e.keyGroup() - keyGroupRange.getStartKeyGroup();
                        if (byKeyGroup[idx] == null) {
                            byKeyGroup[idx] = new ArrayList<>();
                        }
                        byKeyGroup[idx].add(e);
                        count[0]++;
                    }
                });
        return count[0] == 0 ? null : byKeyGroup;
    }

    /**
     * Writes the stream, or returns null when no entry is dirty.
     *
     * @param delegateKind one of the {@code DELEGATE_*} constants
     * @param delegateOffsets the delegate's key-group offsets when kind is KEY_GROUPS, else null
     */
    public StreamStateHandle write(
            byte delegateKind,
            KeyGroupRangeOffsets delegateOffsets,
            CheckpointStreamFactory streamFactory,
            CloseableRegistry registry)
            throws IOException {
        List<CacheEntry>[] byKeyGroup = dirtyEntriesByKeyGroup();
        if (byKeyGroup == null) {
            return null;
        }
        CheckpointStateOutputStream out =
                streamFactory.createCheckpointStateOutputStream(CheckpointedStateScope.EXCLUSIVE);
        registry.registerCloseable(out);
        try {
            DataOutputViewStreamWrapper view = new DataOutputViewStreamWrapper(out);
            view.writeInt(CacheSnapshotFormat.MAGIC);
            view.writeByte(CacheSnapshotFormat.VERSION);
            view.writeByte(delegateKind);
            if (delegateKind == CacheSnapshotFormat.DELEGATE_KEY_GROUPS) {
                KeyGroupRange r = delegateOffsets.getKeyGroupRange();
                view.writeInt(r.getStartKeyGroup());
                view.writeInt(r.getEndKeyGroup());
                for (int kg = r.getStartKeyGroup(); kg <= r.getEndKeyGroup(); kg++) {
                    view.writeLong(delegateOffsets.getKeyGroupOffset(kg));
                }
            }
            new KeyedBackendSerializationProxy<>(states.keySerializer(), states.metaInfos(), false)
                    .write(view);

            int blocks = 0;
            for (List<CacheEntry> entries : byKeyGroup) {
                blocks += entries == null ? 0 : 1;
            }
            view.writeInt(blocks);
            DataOutputSerializer block = new DataOutputSerializer(4096);
            for (List<CacheEntry> entries : byKeyGroup) {
                if (entries == null) {
                    continue;
                }
                block.clear();
                int records = 0;
                for (CacheEntry e : entries) {
                    records += writeRecord(e, block) ? 1 : 0;
                }
                view.writeInt(entries.get(0).keyGroup());
                view.writeInt(records);
                view.writeInt(block.length());
                view.write(block.getSharedBuffer(), 0, block.length());
            }
            if (registry.unregisterCloseable(out)) {
                return out.closeAndGetHandle();
            }
            throw new IOException("Snapshot was cancelled while writing the cache stream");
        } catch (IOException | RuntimeException e) {
            if (registry.unregisterCloseable(out)) {
                IOUtils.closeQuietly(out);
            }
            throw e;
        }
    }

    /** Writes the record of one dirty entry; false if nothing is to be written (see below). */
    private boolean writeRecord(CacheEntry e, DataOutputSerializer out) throws IOException {
        SnapshotStates.Info info = states.infoOf(e.owner());
        if (e.value() instanceof PendingAppends pending) {
            // appends to a list the cache has not read: an append record of the elements
            Object kept = transform(info, pending.elements());
            if (kept == CacheEntry.ABSENT) {
                return false; // every appended element expired: nothing to append
            }
            out.writeShort(info.index);
            out.writeByte(CacheSnapshotFormat.OP_APPEND);
            states.keySerializer().serialize(e.key(), out);
            info.namespaceSerializer.serialize(e.namespace(), out);
            info.valueSerializer.serialize(kept, out);
            return true;
        }
        Object value = e.isAbsent() ? CacheEntry.ABSENT : transform(info, e.value());
        boolean delete = value == CacheEntry.ABSENT;
        out.writeShort(info.index);
        out.writeByte(delete ? CacheSnapshotFormat.OP_DELETE : CacheSnapshotFormat.OP_PUT);
        states.keySerializer().serialize(e.key(), out);
        info.namespaceSerializer.serialize(e.namespace(), out);
        if (info.type == StateDescriptor.Type.MAP) {
            info.userKeySerializer.serialize(e.userKey(), out);
            if (!delete) {
                out.writeBoolean(value == null);
                if (value != null) {
                    info.userValueSerializer.serialize(value, out);
                }
            }
        } else if (!delete) {
            info.valueSerializer.serialize(value, out);
        }
        return true;
    }

    /** Applies the state's snapshot transformer (TTL cleanup); ABSENT if nothing remains. */
    private static Object transform(SnapshotStates.Info info, Object value) {
        StateSnapshotTransformer<Object> t = info.transformer;
        if (t == null || value == null) {
            return value;
        }
        if (info.type == StateDescriptor.Type.LIST) {
            List<Object> kept = new ArrayList<>();
            for (Object element : (List<?>) value) {
                Object transformed = t.filterOrTransform(element);
                if (transformed != null) {
                    kept.add(transformed);
                }
            }
            return kept.isEmpty() ? CacheEntry.ABSENT : kept;
        }
        Object transformed = t.filterOrTransform(value);
        return transformed == null ? CacheEntry.ABSENT : transformed;
    }
}
