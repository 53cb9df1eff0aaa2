package io.github.flinkstate.disagg.backend;

import io.github.flinkstate.disagg.backend.memory.SlotMemory;
import io.github.flinkstate.disagg.backend.metrics.CheckpointFigures;
import io.github.flinkstate.disagg.backend.metrics.DisaggMetrics;
import io.github.flinkstate.disagg.backend.restore.DisaggRestoreOperation;
import io.github.flinkstate.disagg.backend.restore.InheritedFileCopier;
import io.github.flinkstate.disagg.backend.savepoint.CanonicalRestoreOperation;
import io.github.flinkstate.disagg.backend.snapshot.DisaggSnapshotOperation;
import io.github.flinkstate.disagg.backend.snapshot.FileOwnership;
import io.github.flinkstate.disagg.backend.ttl.TtlCompactionFilters;
import io.github.flinkstate.disagg.engine.LsmOptions;
import io.github.flinkstate.disagg.engine.LsmStore;
import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.disagg.engine.cache.BlockMemory;
import io.github.flinkstate.disagg.engine.cache.DiskCache;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import java.io.File;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.runtime.memory.MemoryManager;
import org.apache.flink.runtime.memory.OpaqueMemoryResource;
import org.apache.flink.runtime.state.BackendBuildingException;
import org.apache.flink.runtime.state.HeapPriorityQueuesManager;
import org.apache.flink.runtime.state.InternalKeyContextImpl;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.StateSerializerProvider;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSetFactory;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSnapshotRestoreWrapper;
import org.apache.flink.runtime.state.metrics.LatencyTrackingStateConfig;
import org.apache.flink.runtime.state.metrics.SizeTrackingStateConfig;
import org.apache.flink.util.IOUtils;

/**
 * Builds a {@link DisaggregatedKeyedStateBackend}: opens an empty engine store, or restores one
 * from the task's handles (its own checkpoints and native savepoints with {@link
 * DisaggRestoreOperation}, canonical savepoints of any backend with {@link
 * CanonicalRestoreOperation}), and wires snapshots and file ownership.
 *
 * <p>Thread safety: single use, on the task thread.
 */
public final class DisaggregatedKeyedStateBackendBuilder<K> {

    private final StateBackend.KeyedStateBackendParameters<K> parameters;
    private final BackendSettings settings;
    private final LatencyTrackingStateConfig latencyTracking;
    private final SizeTrackingStateConfig sizeTracking;

    public DisaggregatedKeyedStateBackendBuilder(
            StateBackend.KeyedStateBackendParameters<K> parameters,
            BackendSettings settings,
            LatencyTrackingStateConfig latencyTracking,
            SizeTrackingStateConfig sizeTracking) {
        this.parameters = parameters;
        this.settings = settings;
        this.latencyTracking = latencyTracking;
        this.sizeTracking = sizeTracking;
    }

    public DisaggregatedKeyedStateBackend<K> build() throws BackendBuildingException {
        Environment env = parameters.getEnv();
        KeyGroupRange range = parameters.getKeyGroupRange();
        int numberOfKeyGroups = parameters.getNumberOfKeyGroups();
        // restores hand the restored key serializer snapshot to the provider: a serializer
        // compatible after reconfiguration is used reconfigured afterwards
        StateSerializerProvider<K> keyProvider =
                StateSerializerProvider.fromNewRegisteredSerializer(
                        parameters.getKeySerializer().duplicate());
        ClassLoader classLoader = env.getUserCodeClassLoader().asClassLoader();
        FileOwnership ownership = new FileOwnership();
        Set<String> namedFiles = ConcurrentHashMap.newKeySet();
        TtlCompactionFilters ttlFilters = new TtlCompactionFilters(parameters.getTtlTimeProvider());
        LsmStore store = null;
        DiskCache localCache = null;
        OpaqueMemoryResource<SlotMemory> memory = null;
        InheritedFileCopier inheritedCopy = InheritedFileCopier.none();
        // files of the restored checkpoint that were inlined in its metadata and written back
        // into the primary directory: this store's own, unlike the other restored files
        Set<String> writtenBack = ConcurrentHashMap.newKeySet();
        try {
            memory = acquireSlotMemory(env);
            if (settings.localCacheBytes() > 0) {
                File cacheRoot = new File(settings.localDir(), "disaggregated-cache");
                DiskCache.deleteAbandonedDirectories(cacheRoot); // of TaskManagers that died
                localCache =
                        new DiskCache(
                                new File(
                                        cacheRoot,
                                        settings.primaryDir().getName() + "-" + UUID.randomUUID()),
                                settings.localCacheBytes(),
                                settings.localCacheReserveBytes(),
                                settings.localCacheMmap());
            }
            LsmOptions options =
                    new LsmOptions(
                                    settings.primaryDir().getFileSystem(),
                                    settings.primaryDir(),
                                    KeyGroupSpan.of(
                                            range.getStartKeyGroup(), range.getEndKeyGroup()))
                            .memtableBytes(settings.memtableBytes())
                            .blockCache(blockCache(memory.getResourceHandle(), localCache))
                            .writeBufferBudget(memory.getResourceHandle().writeBuffers())
                            .backgroundThreads(settings.backgroundThreads())
                            .copyThreads(settings.copyThreads())
                            .compression(settings.compression())
                            .readaheadBytes(settings.readaheadBytes())
                            .compactionBytesPerSecond(settings.compactionBytesPerSecond())
                            .warmUpBytesPerSecond(settings.warmUpBytesPerSecond())
                            .cacheHintInSnapshots(settings.localCacheWarmUpHint())
                            .deletionPolicy(
                                    f -> {
                                        // no snapshot can name it any more
                                        namedFiles.remove(f.path());
                                        return (f.createdHere() || writtenBack.contains(f.path()))
                                                && ownership.obsolete(f.path());
                                    })
                            .compactionFilter(ttlFilters)
                            .bloomPrefix(KeyLayout::bloomPrefixLength)
                            .periodicCompactionMillis(settings.periodicCompactionMillis());
            HeapPriorityQueueSetFactory queueFactory =
                    new HeapPriorityQueueSetFactory(range, numberOfKeyGroups, 128);
            Map<String, HeapPriorityQueueSnapshotRestoreWrapper<?>> queues = new HashMap<>();
            Map<String, RegisteredKvState> kvStates = new LinkedHashMap<>();
            Map<String, StreamStateHandle> restoredFiles = Map.of();
            Collection<KeyedStateHandle> handles = parameters.getStateHandles();
            long restoreStart = System.nanoTime();
            long restoreNanos = 0;
            if (handles == null || handles.stream().allMatch(h -> h == null)) {
                store = LsmStore.open(options);
            } else if (CanonicalRestoreOperation.isCanonical(handles)) {
                store =
                        new CanonicalRestoreOperation<>(
                                        keyProvider, classLoader, range, numberOfKeyGroups)
                                .restore(handles, options, queueFactory, queues, kvStates);
                restoreNanos = System.nanoTime() - restoreStart;
            } else {
                DisaggRestoreOperation.Result r =
                        new DisaggRestoreOperation<>(
                                        keyProvider,
                                        classLoader,
                                        range,
                                        numberOfKeyGroups,
                                        parameters.getCancelStreamRegistry())
                                .restore(handles, options, queueFactory, queues, kvStates);
                store = r.store();
                restoredFiles = r.restoredFiles();
                writtenBack.addAll(r.writtenBack());
                if (settings.localCacheWarmUp()) {
                    store.startWarmUp(); // no-op without a local disk cache
                } else {
                    store.dropRestoredHint();
                }
                restoreNanos = System.nanoTime() - restoreStart;
            }
            TypeSerializer<K> keySerializer = keyProvider.currentSchemaSerializer();
            CheckpointFigures lastCheckpoint = new CheckpointFigures();
            if (settings.backgroundCopy()) {
                inheritedCopy =
                        InheritedFileCopier.start(
                                store,
                                inherited(
                                        restoredFiles,
                                        settings.primaryDir(),
                                        settings.claimConfigured()),
                                2 * settings.copyThreads(),
                                settings.primaryDir().getName());
            }
            DisaggMetrics.register(
                    parameters.getMetricGroup(),
                    store,
                    lastCheckpoint,
                    restoreNanos,
                    inheritedCopy::filesLeft);
            Map<String, StreamStateHandle> restored = new HashMap<>(restoredFiles);
            InheritedFileCopier copier = inheritedCopy;
            return new DisaggregatedKeyedStateBackend<>(
                    parameters.getKvStateRegistry(),
                    keySerializer,
                    classLoader,
                    env.getExecutionConfig(),
                    parameters.getTtlTimeProvider(),
                    latencyTracking,
                    sizeTracking,
                    // the task closes the parameters' registry once the restore is done: the
                    // backend's snapshots need their own
                    new CloseableRegistry(),
                    new InternalKeyContextImpl<>(range, numberOfKeyGroups),
                    store,
                    ttlFilters,
                    kvStates,
                    new HeapPriorityQueuesManager(queues, queueFactory, range, numberOfKeyGroups),
                    (s, ks, kgr, kv, timers, reg, comp) ->
                            new DisaggSnapshotOperation<>(
                                    s,
                                    ks,
                                    kgr,
                                    kv,
                                    timers,
                                    reg,
                                    ownership,
                                    restored,
                                    lastCheckpoint,
                                    copier,
                                    namedFiles),
                    memory);
        } catch (Exception | Error e) {
            // the copy works on the store: stop it first
            inheritedCopy.close();
            IOUtils.closeQuietly(store);
            DisaggRestoreOperation.deleteQuietly(writtenBack);
            IOUtils.closeQuietly(localCache);
            IOUtils.closeQuietly(memory);
            if (e instanceof Error) {
                throw (Error) e; // released all the same (an Error thrown by a serializer, say)
            }
            throw new BackendBuildingException(
                    "Could not build the disaggregated keyed state backend for "
                            + parameters.getOperatorIdentifier()
                            + ": "
                            + e.getMessage(),
                    e);
        }
    }

    /**
     * The restored files a checkpoint may have to name through the store's copies, which the
     * background copy makes: those outside this job's directory of engine files (the parent of
     * {@code primaryDir}, which holds one folder per operator): another job's checkpoint or a
     * savepoint, which a NO_CLAIM resume may not reference in its first checkpoint (not after a
     * {@code claim} resume: they are the job's own then); and those with relative handles, which no
     * checkpoint may reference through them.
     */
    static List<String> inherited(
            Map<String, StreamStateHandle> restoredFiles, Path primaryDir, boolean claim) {
        Path jobDir = primaryDir.getParent() != null ? primaryDir.getParent() : primaryDir;
        String prefix = jobDir.toString().endsWith("/") ? jobDir.toString() : jobDir + "/";
        Set<String> relative = DisaggSnapshotOperation.relativeHandles(restoredFiles);
        List<String> result = new ArrayList<>();
        for (String f : restoredFiles.keySet()) {
            if (relative.contains(f) || (!claim && !new Path(f).toString().startsWith(prefix))) {
                result.add(f);
            }
        }
        return result;
    }

    /**
     * The slot's shared memory, or one of this backend's own outside a slot (some test set-ups).
     */
    private OpaqueMemoryResource<SlotMemory> acquireSlotMemory(Environment env) throws Exception {
        MemoryManager slot = env.getMemoryManager();
        return slot == null
                ? SlotMemory.unshared(
                        settings.slotMemoryBytes(),
                        settings.writeBufferRatio(),
                        settings.rowCacheRatio())
                : SlotMemory.acquire(
                        slot,
                        settings.slotMemoryBytes(),
                        settings.writeBufferRatio(),
                        settings.rowCacheRatio());
    }

    /** A cache of the backend's own when its size is configured, else one on the slot's memory. */
    private BlockCache blockCache(SlotMemory memory, DiskCache localCache) {
        return settings.blockCacheBytes() > 0
                ? new BlockCache(
                        new BlockMemory(settings.blockCacheBytes(), settings.rowCacheRatio()),
                        localCache)
                : new BlockCache(memory.blockMemory(), localCache);
    }
}
