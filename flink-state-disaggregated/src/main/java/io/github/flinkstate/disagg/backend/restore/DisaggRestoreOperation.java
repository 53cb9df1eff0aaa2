package io.github.flinkstate.disagg.backend.restore;

import io.github.flinkstate.disagg.backend.InterruptSafeDelete;
import io.github.flinkstate.disagg.backend.KeyLayout;
import io.github.flinkstate.disagg.backend.RegisteredKvState;
import io.github.flinkstate.disagg.backend.snapshot.MetaStreamFormat;
import io.github.flinkstate.disagg.backend.timer.TimerSnapshotFormat;
import io.github.flinkstate.disagg.engine.LsmOptions;
import io.github.flinkstate.disagg.engine.LsmStore;
import io.github.flinkstate.disagg.engine.version.ManifestCodec;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.memory.DataInputViewStreamWrapper;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyExtractorFunction;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedBackendSerializationProxy;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.RegisteredKeyValueStateBackendMetaInfo;
import org.apache.flink.runtime.state.RegisteredPriorityQueueStateBackendMetaInfo;
import org.apache.flink.runtime.state.StateSerializerProvider;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSet;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSetFactory;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSnapshotRestoreWrapper;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.apache.flink.util.ExceptionUtils;
import org.apache.flink.util.IOUtils;
import org.apache.flink.util.StateMigrationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Restores a keyed backend from one or several of its handles (several when rescaling) by reading
 * only their meta streams: meta infos, state ids, engine manifests, timers. The engine then opens
 * every listed file where it is, clipped to the new key-group range; the same file named by two
 * handles is one file. Files that are not on a file system (small files Flink inlined into a
 * savepoint's metadata) are written into the primary directory first.
 *
 * <p>Thread safety: single use, on the task thread.
 */
public final class DisaggRestoreOperation<K> {

    private static final Logger LOG = LoggerFactory.getLogger(DisaggRestoreOperation.class);

    /** What a restore produces. */
    public record Result(
            LsmStore store,
            Map<String, StreamStateHandle> restoredFiles,
            Set<String> writtenBack) {}

    private final StateSerializerProvider<K> keyProvider;
    private final TypeSerializer<K> keySerializer;
    private boolean keyChecked;
    private final ClassLoader classLoader;
    private final KeyGroupRange keyGroupRange;
    private final int numberOfKeyGroups;
    private final CloseableRegistry cancelStreamRegistry;

    public DisaggRestoreOperation(
            StateSerializerProvider<K> keyProvider,
            ClassLoader classLoader,
            KeyGroupRange keyGroupRange,
            int numberOfKeyGroups,
            CloseableRegistry cancelStreamRegistry) {
        this.keyProvider = keyProvider;
        this.keySerializer = keyProvider.currentSchemaSerializer();
        this.classLoader = classLoader;
        this.keyGroupRange = keyGroupRange;
        this.numberOfKeyGroups = numberOfKeyGroups;
        this.cancelStreamRegistry = cancelStreamRegistry;
    }

    public Result restore(
            Collection<KeyedStateHandle> handles,
            LsmOptions options,
            HeapPriorityQueueSetFactory queueFactory,
            Map<String, HeapPriorityQueueSnapshotRestoreWrapper<?>> queues,
            Map<String, RegisteredKvState> kvStates)
            throws Exception {
        long start = System.nanoTime();
        List<byte[]> manifests = new ArrayList<>();
        Map<String, StreamStateHandle> byName = new HashMap<>();
        int count = 0;
        for (KeyedStateHandle h : handles) {
            if (h == null) {
                continue;
            }
            if (!(h instanceof IncrementalRemoteKeyedStateHandle)) {
                throw new IOException(
                        "The disaggregated state backend restores its own checkpoints and"
                                + " native savepoints and canonical savepoints of any backend,"
                                + " not "
                                + h.getClass().getName()
                                + " (another backend's checkpoint or native savepoint: switch"
                                + " backends through a canonical savepoint).");
            }
            IncrementalRemoteKeyedStateHandle handle = (IncrementalRemoteKeyedStateHandle) h;
            for (HandleAndLocalPath e : handle.getSharedState()) {
                byName.put(e.getLocalPath(), e.getHandle());
            }
            for (HandleAndLocalPath e : handle.getPrivateState()) {
                byName.put(e.getLocalPath(), e.getHandle());
            }
            manifests.add(readMeta(handle, queueFactory, queues, kvStates));
            count++;
        }
        Map<String, StreamStateHandle> restoredFiles = new HashMap<>();
        Set<String> writtenBack = new HashSet<>();
        // called once per file entry the new range keeps; a file named by several handles (1 -> 2
        // -> 1) resolves to the same path each time, except inlined bytes: each entry gets a copy
        // of
        // its own, deleted with that entry (the store deletes its files by path)
        LsmStore store;
        try {
            store =
                    LsmStore.open(
                            options,
                            manifests,
                            recorded ->
                                    resolve(recorded, byName, options, restoredFiles, writtenBack));
        } catch (Exception | Error e) {
            deleteQuietly(writtenBack); // nobody else knows of them
            throw e;
        }
        LOG.info(
                "Restored {} from {} handle(s), {} file(s), in {} ms without reading data",
                keyGroupRange,
                count,
                restoredFiles.size(),
                (System.nanoTime() - start) / 1_000_000);
        return new Result(store, restoredFiles, writtenBack);
    }

    private String resolve(
            String recorded,
            Map<String, StreamStateHandle> byName,
            LsmOptions options,
            Map<String, StreamStateHandle> restoredFiles,
            Set<String> writtenBack) {
        String name = new Path(recorded).getName();
        StreamStateHandle h = byName.get(name);
        if (h == null) {
            throw new IllegalStateException(
                    "File "
                            + recorded
                            + " is listed in the engine manifest but missing from the state"
                            + " handle; the checkpoint is incomplete");
        }
        if (!(h instanceof FileStateHandle)) {
            // bytes inlined in the checkpoint metadata: the copy is this store's own file, deleted
            // by the store when obsolete and named as a new file by the next checkpoint
            String path = materialize(h, name, options);
            writtenBack.add(path);
            return path;
        }
        String path = ((FileStateHandle) h).getFilePath().toString();
        restoredFiles.put(path, h);
        return path;
    }

    /**
     * Deletes files this restore wrote back, for a restore that failed (best effort, logged), also
     * on a thread that was interrupted (a cancelled restore).
     */
    public static void deleteQuietly(Collection<String> writtenBack) {
        for (String p : writtenBack) {
            try {
                InterruptSafeDelete.delete(new Path(p));
            } catch (IOException | RuntimeException e) {
                LOG.warn("Could not delete {} written back by a failed restore", p, e);
            }
        }
    }

    private String materialize(StreamStateHandle h, String name, LsmOptions options) {
        Path target = new Path(options.primaryDir(), "restored-" + UUID.randomUUID() + "-" + name);
        try {
            FileSystem fs = target.getFileSystem();
            try (InputStream in = h.openInputStream();
                    OutputStream out = fs.create(target, FileSystem.WriteMode.NO_OVERWRITE)) {
                in.transferTo(out);
            }
            return target.toString();
        } catch (IOException e) {
            try {
                InterruptSafeDelete.delete(target); // a partial copy
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw new java.io.UncheckedIOException(
                    "Could not write restored file " + name + " to " + target, e);
        }
    }

    private byte[] readMeta(
            IncrementalRemoteKeyedStateHandle handle,
            HeapPriorityQueueSetFactory queueFactory,
            Map<String, HeapPriorityQueueSnapshotRestoreWrapper<?>> queues,
            Map<String, RegisteredKvState> kvStates)
            throws Exception {
        StreamStateHandle metaHandle = handle.getMetaDataStateHandle();
        FSDataInputStream in;
        try {
            in = metaHandle.openInputStream();
        } catch (IOException e) {
            throw new IOException(
                    "The meta stream " + metaHandle + " could not be opened: " + e.getMessage(), e);
        }
        cancelStreamRegistry.registerCloseable(in);
        try {
            return parseMeta(in, metaHandle, queueFactory, queues, kvStates);
        } catch (IOException | RuntimeException e) {
            if (cancelStreamRegistry.isClosed()) {
                throw e; // the restore was cancelled
            }
            boolean early = ExceptionUtils.findThrowable(e, EOFException.class).isPresent();
            throw new IOException(
                    "The meta stream "
                            + metaHandle
                            + (early
                                    ? " ends early (truncated or not fully written)"
                                    : " could not be read")
                            + ": "
                            + e.getMessage(),
                    e);
        } finally {
            if (cancelStreamRegistry.unregisterCloseable(in)) {
                IOUtils.closeQuietly(in);
            }
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private byte[] parseMeta(
            FSDataInputStream in,
            StreamStateHandle metaHandle,
            HeapPriorityQueueSetFactory queueFactory,
            Map<String, HeapPriorityQueueSnapshotRestoreWrapper<?>> queues,
            Map<String, RegisteredKvState> kvStates)
            throws Exception {
        DataInputViewStreamWrapper view = new DataInputViewStreamWrapper(in);
        MetaStreamFormat.readHeader(view, String.valueOf(metaHandle));
        KeyedBackendSerializationProxy<K> proxy = new KeyedBackendSerializationProxy<>(classLoader);
        proxy.read(view);
        checkKeySerializer(proxy);
        Map<String, Integer> ids = MetaStreamFormat.readStateIds(view);
        for (StateMetaInfoSnapshot s : proxy.getStateMetaInfoSnapshots()) {
            switch (s.getBackendStateType()) {
                case KEY_VALUE:
                    if (!kvStates.containsKey(s.getName())) {
                        int id = ids.getOrDefault(s.getName(), KeyLayout.stateId(s.getName()));
                        kvStates.put(
                                s.getName(),
                                new RegisteredKvState(
                                        id, new RegisteredKeyValueStateBackendMetaInfo<>(s)));
                    }
                    break;
                case PRIORITY_QUEUE:
                    if (!queues.containsKey(s.getName())) {
                        RegisteredPriorityQueueStateBackendMetaInfo meta =
                                new RegisteredPriorityQueueStateBackendMetaInfo<>(s);
                        HeapPriorityQueueSet set =
                                queueFactory.create(s.getName(), meta.getElementSerializer());
                        queues.put(
                                s.getName(),
                                new HeapPriorityQueueSnapshotRestoreWrapper(
                                        set,
                                        meta,
                                        KeyExtractorFunction.forKeyedObjects(),
                                        keyGroupRange,
                                        numberOfKeyGroups));
                    }
                    break;
                default:
                    throw new IOException(
                            "Unexpected state type "
                                    + s.getBackendStateType()
                                    + " of state "
                                    + s.getName());
            }
        }
        byte[] manifest = MetaStreamFormat.readManifest(view, metaHandle.getStateSize());
        // checked here, where a corrupt one can be named by its handle (the store decodes it again)
        ManifestCodec.decode(manifest);
        TimerSnapshotFormat.read(view, queues, keyGroupRange);
        return manifest;
    }

    private void checkKeySerializer(KeyedBackendSerializationProxy<K> proxy)
            throws StateMigrationException {
        // the first handle's snapshot goes to the provider, so that a key serializer compatible
        // after reconfiguration is used reconfigured from now on; the others are checked alike
        TypeSerializerSchemaCompatibility<K> compat =
                keyChecked
                        ? keySerializer
                                .snapshotConfiguration()
                                .resolveSchemaCompatibility(proxy.getKeySerializerSnapshot())
                        : keyProvider.setPreviousSerializerSnapshotForRestoredState(
                                proxy.getKeySerializerSnapshot());
        keyChecked = true;
        if (compat.isCompatibleAfterMigration() || compat.isIncompatible()) {
            throw new StateMigrationException(
                    "The new key serializer ("
                            + keySerializer
                            + ") must be compatible with the key serializer of the restored state.");
        }
    }
}
