package io.github.flinkstate.disagg.backend.savepoint;

import io.github.flinkstate.disagg.backend.InterruptSafeDelete;
import io.github.flinkstate.disagg.backend.KeyLayout;
import io.github.flinkstate.disagg.backend.RegisteredKvState;
import io.github.flinkstate.disagg.engine.LsmOptions;
import io.github.flinkstate.disagg.engine.LsmStore;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.ListSerializer;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.runtime.state.KeyExtractorFunction;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupsSavepointStateHandle;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.RegisteredKeyValueStateBackendMetaInfo;
import org.apache.flink.runtime.state.RegisteredPriorityQueueStateBackendMetaInfo;
import org.apache.flink.runtime.state.StateSerializerProvider;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueElement;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSet;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSetFactory;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSnapshotRestoreWrapper;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.apache.flink.runtime.state.restore.FullSnapshotRestoreOperation;
import org.apache.flink.runtime.state.restore.KeyGroup;
import org.apache.flink.runtime.state.restore.KeyGroupEntry;
import org.apache.flink.runtime.state.restore.SavepointRestoreResult;
import org.apache.flink.runtime.state.restore.ThrowingIterator;
import org.apache.flink.util.IOUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Restores a keyed backend from canonical savepoints ({@link KeyGroupsSavepointStateHandle}), of
 * this backend or of any other (HashMap, RocksDB): each handle is clipped to the backend's key
 * groups, read with Flink's {@link FullSnapshotRestoreOperation}, and every entry is written into a
 * fresh engine store in the engine layout; timers go into the heap priority queues.
 *
 * <p>State meta infos are registered as read, as on a native restore, so that re-registering a
 * state checks serializer compatibility and migrates the values when needed ({@code
 * StateMigration}). Keys, namespaces, values and map user keys are copied as the savepoint's
 * serializers wrote them; only list values are split into one engine entry per element.
 *
 * <p>Unlike a native restore this reads and rewrites the whole state: a canonical savepoint is a
 * portable copy, not a set of engine files. The files written belong to the new store.
 *
 * <p>Thread safety: single use, on the task thread.
 */
public final class CanonicalRestoreOperation<K> {

    private static final Logger LOG = LoggerFactory.getLogger(CanonicalRestoreOperation.class);

    private final StateSerializerProvider<K> keyProvider;
    private final ClassLoader classLoader;
    private final KeyGroupRange keyGroupRange;
    private final int numberOfKeyGroups;
    private final CanonicalKeys keys;

    public CanonicalRestoreOperation(
            StateSerializerProvider<K> keyProvider,
            ClassLoader classLoader,
            KeyGroupRange keyGroupRange,
            int numberOfKeyGroups) {
        this.keyProvider = keyProvider;
        this.classLoader = classLoader;
        this.keyGroupRange = keyGroupRange;
        this.numberOfKeyGroups = numberOfKeyGroups;
        this.keys = new CanonicalKeys(numberOfKeyGroups);
    }

    /** True if {@code handles} are canonical savepoint handles (null entries ignored). */
    public static boolean isCanonical(Collection<KeyedStateHandle> handles) {
        return handles != null
                && handles.stream().anyMatch(h -> h instanceof KeyGroupsSavepointStateHandle);
    }

    /**
     * Opens a new store under {@code options} and writes the savepoint's entries of this backend's
     * key groups into it; registers the savepoint's states in {@code kvStates} and {@code queues}.
     */
    public LsmStore restore(
            Collection<KeyedStateHandle> handles,
            LsmOptions options,
            HeapPriorityQueueSetFactory queueFactory,
            Map<String, HeapPriorityQueueSnapshotRestoreWrapper<?>> queues,
            Map<String, RegisteredKvState> kvStates)
            throws Exception {
        long start = System.nanoTime();
        List<KeyedStateHandle> clipped = new ArrayList<>();
        for (KeyedStateHandle h : handles) {
            if (h == null) {
                continue;
            }
            if (!(h instanceof KeyGroupsSavepointStateHandle)) {
                throw new IOException(
                        "A restore from a canonical savepoint got a handle of another kind ("
                                + h.getClass().getName()
                                + "); the restored state is not one savepoint.");
            }
            KeyGroupsStateHandle c = ((KeyGroupsStateHandle) h).getIntersection(keyGroupRange);
            if (c != null) {
                clipped.add(c);
            }
        }
        LsmStore store = LsmStore.open(options);
        try {
            long entries = 0;
            try (ThrowingIterator<SavepointRestoreResult> results =
                    new FullSnapshotRestoreOperation<>(
                                    keyGroupRange, classLoader, clipped, keyProvider)
                            .restore()) {
                while (results.hasNext()) {
                    SavepointRestoreResult result = results.next();
                    Target[] targets =
                            register(
                                    result.getStateMetaInfoSnapshots(),
                                    queueFactory,
                                    queues,
                                    kvStates);
                    TypeSerializer<K> restoredKeys = keyProvider.previousSchemaSerializer();
                    try (ThrowingIterator<KeyGroup> groups = result.getRestoredKeyGroups()) {
                        while (groups.hasNext()) {
                            entries += readKeyGroup(groups.next(), targets, restoredKeys, store);
                        }
                    }
                }
            }
            LOG.info(
                    "Restored {} from {} canonical savepoint handle(s): {} entries in {} ms",
                    keyGroupRange,
                    clipped.size(),
                    entries,
                    (System.nanoTime() - start) / 1_000_000);
            return store;
        } catch (Exception | Error e) {
            discard(store);
            throw e;
        }
    }

    /**
     * Closes a store that failed to restore and deletes the files it wrote, also on the interrupted
     * thread of a cancelled restore. Closed first: the close waits for a running flush or
     * compaction, whose output must be listed (a closed store installs nothing more); on an
     * interrupted thread it does not wait, and such work deletes its own output when it ends.
     */
    private static void discard(LsmStore store) {
        IOUtils.closeQuietly(store);
        for (String f : store.liveFiles()) {
            try {
                InterruptSafeDelete.delete(new Path(f));
            } catch (IOException | RuntimeException e) {
                LOG.warn("Could not delete file {} of a failed restore", f, e);
            }
        }
    }

    /** Where the entries of one savepoint state go. */
    private record Target(
            StateDescriptor.Type type,
            int stateId,
            TypeSerializer<?> namespaceSerializer,
            TypeSerializer<?> stateSerializer,
            HeapPriorityQueueSnapshotRestoreWrapper<?> queue) {}

    @SuppressWarnings({"unchecked", "rawtypes"})
    private Target[] register(
            List<StateMetaInfoSnapshot> metaInfos,
            HeapPriorityQueueSetFactory queueFactory,
            Map<String, HeapPriorityQueueSnapshotRestoreWrapper<?>> queues,
            Map<String, RegisteredKvState> kvStates)
            throws IOException {
        Map<Integer, String> namesById = new HashMap<>();
        kvStates.values().forEach(s -> namesById.put(s.stateId(), s.metaInfo().getName()));
        Target[] targets = new Target[metaInfos.size()];
        for (int i = 0; i < targets.length; i++) {
            StateMetaInfoSnapshot s = metaInfos.get(i);
            switch (s.getBackendStateType()) {
                case KEY_VALUE:
                    {
                        RegisteredKeyValueStateBackendMetaInfo<?, ?> meta =
                                new RegisteredKeyValueStateBackendMetaInfo<>(s);
                        RegisteredKvState registered = kvStates.get(s.getName());
                        if (registered == null) {
                            int id = KeyLayout.stateId(s.getName());
                            String clash = namesById.putIfAbsent(id, s.getName());
                            if (clash != null) {
                                throw new IOException(
                                        "States '"
                                                + clash
                                                + "' and '"
                                                + s.getName()
                                                + "' of the savepoint have the same state id in"
                                                + " the disaggregated backend; rename one.");
                            }
                            registered = new RegisteredKvState(id, meta);
                            kvStates.put(s.getName(), registered);
                        }
                        targets[i] =
                                new Target(
                                        meta.getStateType(),
                                        registered.stateId(),
                                        meta.getNamespaceSerializer(),
                                        meta.getStateSerializer(),
                                        null);
                        break;
                    }
                case PRIORITY_QUEUE:
                    {
                        HeapPriorityQueueSnapshotRestoreWrapper<?> q = queues.get(s.getName());
                        if (q == null) {
                            RegisteredPriorityQueueStateBackendMetaInfo meta =
                                    new RegisteredPriorityQueueStateBackendMetaInfo<>(s);
                            HeapPriorityQueueSet set =
                                    queueFactory.create(s.getName(), meta.getElementSerializer());
                            q =
                                    new HeapPriorityQueueSnapshotRestoreWrapper(
                                            set,
                                            meta,
                                            KeyExtractorFunction.forKeyedObjects(),
                                            keyGroupRange,
                                            numberOfKeyGroups);
                            queues.put(s.getName(), q);
                        }
                        targets[i] = new Target(null, -1, null, null, q);
                        break;
                    }
                default:
                    throw new IOException(
                            "Unexpected state type "
                                    + s.getBackendStateType()
                                    + " of state "
                                    + s.getName()
                                    + " in a keyed savepoint");
            }
        }
        return targets;
    }

    private long readKeyGroup(
            KeyGroup group, Target[] targets, TypeSerializer<K> restoredKeys, LsmStore store)
            throws Exception {
        int kg = group.getKeyGroupId();
        long n = 0;
        try (ThrowingIterator<KeyGroupEntry> entries = group.getKeyGroupEntries()) {
            while (entries.hasNext()) {
                KeyGroupEntry e = entries.next();
                int id = e.getKvStateId();
                if (id < 0 || id >= targets.length) {
                    throw new IOException(
                            "Savepoint entry of key group "
                                    + kg
                                    + " names state "
                                    + id
                                    + " but the savepoint has "
                                    + targets.length
                                    + " states");
                }
                write(kg, e, targets[id], restoredKeys, store);
                n++;
            }
        }
        return n;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private void write(
            int kg, KeyGroupEntry e, Target t, TypeSerializer<K> restoredKeys, LsmStore store)
            throws IOException {
        if (t.queue() != null) {
            DataInputDeserializer in = new DataInputDeserializer(e.getKey());
            in.skipBytesToRead(keys.prefixBytes());
            Object element = t.queue().getMetaInfo().getElementSerializer().deserialize(in);
            ((HeapPriorityQueueSet) t.queue().getPriorityQueue())
                    .add((HeapPriorityQueueElement) element);
            return;
        }
        boolean ambiguous = CanonicalKeys.ambiguous(restoredKeys, t.namespaceSerializer());
        switch (t.type()) {
            case VALUE:
            case REDUCING:
            case AGGREGATING:
                store.put(
                        keys.toEngine(
                                e.getKey(),
                                kg,
                                t.stateId(),
                                restoredKeys,
                                t.namespaceSerializer(),
                                ambiguous,
                                false),
                        e.getValue());
                break;
            case MAP:
                store.put(
                        keys.toEngine(
                                e.getKey(),
                                kg,
                                t.stateId(),
                                restoredKeys,
                                t.namespaceSerializer(),
                                ambiguous,
                                true),
                        e.getValue());
                break;
            case LIST:
                byte[] prefix =
                        keys.toEngine(
                                e.getKey(),
                                kg,
                                t.stateId(),
                                restoredKeys,
                                t.namespaceSerializer(),
                                ambiguous,
                                false);
                appendElements(
                        store,
                        prefix,
                        e.getValue(),
                        ((ListSerializer<?>) t.stateSerializer()).getElementSerializer());
                break;
            default:
                throw new IOException("Unsupported state type " + t.type() + " in a savepoint");
        }
    }

    /** Splits a delimited list value into one engine append per element. */
    private static void appendElements(
            LsmStore store, byte[] prefix, byte[] value, TypeSerializer<?> elementSerializer)
            throws IOException {
        DataInputDeserializer in = new DataInputDeserializer(value);
        while (in.available() > 0) {
            int at = in.getPosition();
            elementSerializer.deserialize(in);
            int end = in.getPosition();
            byte[] element = new byte[end - at];
            System.arraycopy(value, at, element, 0, element.length);
            store.append(prefix, element);
            if (in.available() > 0) {
                in.readByte(); // the delimiter
            }
        }
    }
}
