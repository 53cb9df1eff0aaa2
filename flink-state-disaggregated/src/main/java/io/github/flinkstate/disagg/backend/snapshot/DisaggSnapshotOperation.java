package io.github.flinkstate.disagg.backend.snapshot;

import io.github.flinkstate.disagg.backend.InterruptSafeDelete;
import io.github.flinkstate.disagg.backend.RegisteredKvState;
import io.github.flinkstate.disagg.backend.metrics.CheckpointFigures;
import io.github.flinkstate.disagg.backend.restore.InheritedFileCopier;
import io.github.flinkstate.disagg.backend.timer.TimerSnapshotFormat;
import io.github.flinkstate.disagg.engine.LsmSnapshot;
import io.github.flinkstate.disagg.engine.LsmStore;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RunnableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import javax.annotation.Nullable;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.memory.DataOutputViewStreamWrapper;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.SnapshotType;
import org.apache.flink.runtime.state.CheckpointStateOutputStream;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.CheckpointedStateScope;
import org.apache.flink.runtime.state.DoneFuture;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedBackendSerializationProxy;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.StreamCompressionDecorator;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.filesystem.RelativeFileStateHandle;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSnapshotRestoreWrapper;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueStateSnapshot;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.apache.flink.util.IOUtils;
import org.apache.flink.util.Preconditions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checkpoints and native savepoints of one keyed backend as an {@link
 * IncrementalRemoteKeyedStateHandle}:
 *
 * <ul>
 *   <li>synchronous part (task thread): freeze the memtable and fix the snapshot's point in the
 *       write order ({@link LsmStore#beginSnapshot()}, no I/O), copy the state meta infos and the
 *       timers;
 *   <li>asynchronous part: wait for the background flush of the memtables frozen at the barrier,
 *       which pins exactly the files holding the state at the barrier; write the meta stream (meta
 *       infos, state ids, engine manifest, timers) and name the engine files as shared state, where
 *       they are. Nothing else is written, except where a file may not be named where it is: in a
 *       {@code FULL_CHECKPOINT} ({@code FORWARD}) every restored or previously referenced file, and
 *       in any checkpoint every restored file whose handle is relative, is named through an
 *       identical copy (the store's own, {@link LsmStore#rehomeAll}, or one written into the
 *       checkpoint as shared state), the manifest staying the barrier's; in a savepoint ({@code
 *       NO_SHARING}) every file is copied into the savepoint.
 * </ul>
 *
 * <p>Each handle entry's local path is the file's name in the manifest, so a restore can map the
 * manifest to wherever the files are (moved checkpoints, copies in savepoints).
 *
 * <p>Thread safety: {@link #snapshot} on the task thread; the futures it returns run on any thread;
 * the notify methods on the task thread.
 */
public final class DisaggSnapshotOperation<K> {

    private static final Logger LOG = LoggerFactory.getLogger(DisaggSnapshotOperation.class);

    /** Creates the operation once the backend's parts exist. */
    @FunctionalInterface
    public interface Factory<K> {
        DisaggSnapshotOperation<K> create(
                LsmStore store,
                TypeSerializer<K> keySerializer,
                KeyGroupRange keyGroupRange,
                Supplier<List<RegisteredKvState>> kvStates,
                Supplier<Map<String, HeapPriorityQueueSnapshotRestoreWrapper<?>>> timers,
                CloseableRegistry cancelStreamRegistry,
                StreamCompressionDecorator compression);
    }

    private final LsmStore store;
    private final TypeSerializer<K> keySerializer;
    private final KeyGroupRange keyGroupRange;
    private final Supplier<List<RegisteredKvState>> kvStates;
    private final Supplier<Map<String, HeapPriorityQueueSnapshotRestoreWrapper<?>>> timers;
    private final CloseableRegistry cancelStreamRegistry;
    private final FileOwnership ownership;
    private final Map<String, StreamStateHandle> restoredHandles;
    private final CheckpointFigures figures;
    private final UUID backendId = UUID.randomUUID();

    /**
     * Files the restore brought or a checkpoint named, while the store may still name them: the
     * owner of the store removes a file when no version of the store uses it any more ({@code
     * DisaggregatedKeyedStateBackendBuilder}'s deletion policy), so it holds at most the files in
     * use. Thread-safe (a concurrent set).
     */
    private final Set<String> everReferenced;

    private final InheritedFileCopier inheritedCopy;

    /**
     * Ids of the checkpoints (not savepoints) taken and not yet completed, subsumed or aborted:
     * only their completion settles the fate of older checkpoints' files.
     */
    private final Set<Long> checkpointsTaken = ConcurrentHashMap.newKeySet();

    /** Restored files whose handles are relative: never named through those handles. */
    private final Set<String> relativeRestored;

    /**
     * The full checkpoints whose asynchronous part has not ended: it may still swap copies in for
     * files earlier checkpoints named (see {@link FullInFlight}).
     */
    private final Set<FullInFlight> fullsInFlight = ConcurrentHashMap.newKeySet();

    /**
     * A full checkpoint ({@code FORWARD}) between its synchronous part and the end of its
     * asynchronous part. It may not name the files earlier checkpoints named ({@link #avoided}); it
     * names them through copies ({@link #copies}, original to copy) that the store swaps in, and
     * when it completes, Flink deletes the originals that only the checkpoints it subsumes named.
     * Any snapshot taken meanwhile may hold those originals in its barrier's version: an
     * incremental checkpoint (several concurrent checkpoints) that named them where they are could
     * complete after that deletion, naming deleted files; a native savepoint (Flink starts
     * savepoints even when the concurrent-checkpoint limit is reached) or another full checkpoint
     * that copied them could fail reading them. So each waits for {@link #ended}: an incremental
     * one names every avoided file through the same copy, or its own; a savepoint and a full one
     * copy it from that copy ({@code SnapshotDuringFullCheckpointTest}).
     */
    private static final class FullInFlight {
        final CompletableFuture<Void> ended = new CompletableFuture<>();

        /** Taken by the asynchronous part when it starts, or by a cancel before it ever ran. */
        final AtomicBoolean claimed = new AtomicBoolean();

        volatile Set<String> avoided = Set.of();
        volatile Map<String, String> copies = Map.of();

        /**
         * The avoided files it copied into its checkpoint (their store copies had been compacted
         * away), original to the copy's handle; set once its handle exists.
         */
        volatile Map<String, StreamStateHandle> checkpointCopies = Map.of();

        /** Ends it (once): no swap of it happens after this. */
        void end(Set<FullInFlight> inFlight) {
            inFlight.remove(this);
            ended.complete(null);
        }
    }

    public DisaggSnapshotOperation(
            LsmStore store,
            TypeSerializer<K> keySerializer,
            KeyGroupRange keyGroupRange,
            Supplier<List<RegisteredKvState>> kvStates,
            Supplier<Map<String, HeapPriorityQueueSnapshotRestoreWrapper<?>>> timers,
            CloseableRegistry cancelStreamRegistry,
            FileOwnership ownership,
            Map<String, StreamStateHandle> restoredHandles,
            CheckpointFigures figures,
            InheritedFileCopier inheritedCopy,
            Set<String> namedFiles) {
        this.store = store;
        this.everReferenced = namedFiles;
        this.inheritedCopy = inheritedCopy;
        this.figures = figures;
        this.keySerializer = keySerializer;
        this.keyGroupRange = keyGroupRange;
        this.kvStates = kvStates;
        this.timers = timers;
        this.cancelStreamRegistry = cancelStreamRegistry;
        this.ownership = ownership;
        this.restoredHandles = new ConcurrentHashMap<>(restoredHandles);
        this.everReferenced.addAll(restoredHandles.keySet());
        // a restored file the store stopped using before this line was offered to the deletion
        // policy while its name was not here yet: nothing would remove it later
        Set<String> inUse = store.filesInUse();
        for (String path : restoredHandles.keySet()) {
            if (!inUse.contains(path)) {
                this.everReferenced.remove(path);
            }
        }
        this.relativeRestored = relativeHandles(restoredHandles);
    }

    /** How many file names {@link #everReferenced} holds. */
    public int namedFilesHeld() {
        return everReferenced.size();
    }

    /**
     * The restored files whose handles are {@link RelativeFileStateHandle}s, which a later
     * checkpoint may not reuse (see {@link #planCopies}).
     */
    public static Set<String> relativeHandles(Map<String, StreamStateHandle> restoredHandles) {
        Set<String> relative = new HashSet<>();
        restoredHandles.forEach(
                (path, handle) -> {
                    if (handle instanceof RelativeFileStateHandle) {
                        relative.add(path);
                    }
                });
        return Set.copyOf(relative);
    }

    public RunnableFuture<SnapshotResult<KeyedStateHandle>> snapshot(
            long checkpointId, CheckpointStreamFactory streamFactory, CheckpointOptions options)
            throws IOException {
        SnapshotType.SharingFilesStrategy sharing =
                options.getCheckpointType().getSharingFilesStrategy();
        if (sharing != SnapshotType.SharingFilesStrategy.NO_SHARING) {
            checkpointsTaken.add(checkpointId);
        }
        List<RegisteredKvState> states = kvStates.get();
        if (states.isEmpty() && timers.get().isEmpty()) {
            return DoneFuture.of(SnapshotResult.empty());
        }
        List<StateMetaInfoSnapshot> metaInfos = new ArrayList<>();
        Map<String, Integer> stateIds = new LinkedHashMap<>();
        for (RegisteredKvState s : states) {
            metaInfos.add(s.metaInfo().snapshot());
            stateIds.put(s.metaInfo().getName(), s.stateId());
        }
        List<HeapPriorityQueueStateSnapshot<?>> timerSnapshots = new ArrayList<>();
        for (HeapPriorityQueueSnapshotRestoreWrapper<?> pq : timers.get().values()) {
            HeapPriorityQueueStateSnapshot<?> s = pq.stateSnapshot();
            timerSnapshots.add(s);
            metaInfos.add(s.getMetaInfoSnapshot());
        }
        // every snapshot waits for the full ones begun before it (see FullInFlight); listed before
        // the barrier, so that one that ended in between swapped its copies in before the
        // barrier's version was fixed
        List<FullInFlight> fullsBefore = List.copyOf(fullsInFlight);
        LsmStore.PendingSnapshot engineSnapshot = store.beginSnapshot();
        FullInFlight mine =
                sharing == SnapshotType.SharingFilesStrategy.FORWARD ? new FullInFlight() : null;
        if (mine != null) {
            fullsInFlight.add(mine);
        }
        CloseableRegistry streams = new CloseableRegistry();
        // what a discard on this TaskManager may delete: the copies made for this snapshot only
        Map<String, StreamStateHandle> ownCopies = new ConcurrentHashMap<>();
        GuardedSnapshotFuture[] self = new GuardedSnapshotFuture[1];
        java.io.Closeable cancelOnClose = () -> self[0].onRegistryClose();
        self[0] =
                new GuardedSnapshotFuture(
                        () ->
                                runAs(
                                        mine,
                                        checkpointId,
                                        () ->
                                                asyncPart(
                                                        checkpointId,
                                                        streamFactory,
                                                        sharing,
                                                        metaInfos,
                                                        stateIds,
                                                        timerSnapshots,
                                                        // the flush of the barrier's memtables,
                                                        // off the task thread
                                                        engineSnapshot.await(),
                                                        streams,
                                                        mine,
                                                        fullsBefore,
                                                        ownCopies)),
                        result -> onDiscardedOnTaskManager(checkpointId, result, ownCopies),
                        () -> {
                            if (mine != null && mine.claimed.compareAndSet(false, true)) {
                                mine.end(fullsInFlight); // cancelled before it ever ran
                            }
                            engineSnapshot.close();
                            cancelStreamRegistry.unregisterCloseable(cancelOnClose);
                            IOUtils.closeQuietly(streams);
                        },
                        () -> IOUtils.closeQuietly(streams));
        // closing the backend (task cancellation) cancels a running snapshot
        cancelStreamRegistry.registerCloseable(cancelOnClose);
        return self[0];
    }

    /**
     * Runs a checkpoint's asynchronous part; a full one ({@code mine} not null) is claimed first (a
     * cancel before it ran has ended it already) and ended after, so that the checkpoints waiting
     * for it see every swap it made.
     */
    private <T> T runAs(@Nullable FullInFlight mine, long checkpointId, Callable<T> asyncPart)
            throws Exception {
        if (mine == null) {
            return asyncPart.call();
        }
        if (!mine.claimed.compareAndSet(false, true)) {
            throw new CancellationException("checkpoint " + checkpointId + " was cancelled");
        }
        try {
            return asyncPart.call();
        } finally {
            mine.end(fullsInFlight);
        }
    }

    private SnapshotResult<KeyedStateHandle> asyncPart(
            long checkpointId,
            CheckpointStreamFactory streamFactory,
            SnapshotType.SharingFilesStrategy sharing,
            List<StateMetaInfoSnapshot> metaInfos,
            Map<String, Integer> stateIds,
            List<HeapPriorityQueueStateSnapshot<?>> timerSnapshots,
            LsmSnapshot engineSnapshot,
            CloseableRegistry streams,
            FullInFlight mine,
            List<FullInFlight> fullsBefore,
            Map<String, StreamStateHandle> ownCopies)
            throws Exception {
        byte[] manifest = engineSnapshot.manifest();
        Map<String, Long> files = engineSnapshot.fileSizes();
        Set<String> copyIntoCheckpoint = Set.of();
        Map<String, StreamStateHandle> copyFrom = Map.of();
        Map<String, String> namedThrough = Map.of();
        LsmSnapshot pinnedCopies = null;
        // first, wait for the full checkpoints begun before this snapshot (see FullInFlight): the
        // originals of the files they avoided may be deleted, and what they named counts as
        // named before
        Map<String, String> earlierCopies = new HashMap<>();
        Map<String, StreamStateHandle> earlierCheckpointCopies = new HashMap<>();
        Set<String> avoided =
                fullsBefore.isEmpty()
                        ? Set.of()
                        : awaitFulls(
                                checkpointId, fullsBefore, earlierCopies, earlierCheckpointCopies);
        if (sharing == SnapshotType.SharingFilesStrategy.NO_SHARING) {
            copyIntoCheckpoint = files.keySet();
            if (!fullsBefore.isEmpty()) {
                pinnedCopies = store.pinFiles(); // a store copy stays until it is copied
                Map<String, StreamStateHandle> from = new HashMap<>();
                for (String path : files.keySet()) {
                    if (avoided.contains(path)) {
                        from.put(
                                path,
                                copySource(
                                        path,
                                        files.get(path),
                                        earlierCopies,
                                        earlierCheckpointCopies));
                    }
                }
                copyFrom = from;
            }
        } else {
            // FORWARD (a full checkpoint) may name no file named before; any checkpoint may name
            // no restored file whose handle is relative
            boolean full = sharing == SnapshotType.SharingFilesStrategy.FORWARD;
            Set<String> mayNotName = new HashSet<>();
            for (String path : files.keySet()) {
                if (avoided.contains(path)
                        || (full && everReferenced.contains(path))
                        || relativeRestored.contains(path)) {
                    mayNotName.add(path);
                }
            }
            if (mine != null) {
                mine.avoided = Set.copyOf(mayNotName); // before any swap of its own
            }
            if (!mayNotName.isEmpty()) {
                CopiesPlan plan =
                        planCopies(
                                checkpointId,
                                full,
                                mayNotName,
                                files,
                                earlierCopies,
                                earlierCheckpointCopies);
                copyIntoCheckpoint = plan.copyIntoCheckpoint();
                copyFrom = plan.copyFrom();
                namedThrough = plan.namedThrough();
                pinnedCopies = plan.pinnedCopies();
                if (mine != null) {
                    mine.copies = Map.copyOf(namedThrough);
                }
            }
        }
        try {
            SnapshotResult<KeyedStateHandle> result =
                    finish(
                            checkpointId,
                            streamFactory,
                            metaInfos,
                            stateIds,
                            timerSnapshots,
                            manifest,
                            files,
                            copyIntoCheckpoint,
                            copyFrom,
                            namedThrough,
                            sharing == SnapshotType.SharingFilesStrategy.NO_SHARING,
                            ownCopies,
                            streams);
            if (mine != null) {
                mine.checkpointCopies = Map.copyOf(ownCopies);
            }
            return result;
        } finally {
            if (pinnedCopies != null) {
                pinnedCopies.release();
            }
        }
    }

    /**
     * How a checkpoint names the files it may not name where they are: the files to copy into the
     * checkpoint, the files named through one of the store's copies (original to copy), and the pin
     * that keeps those copies until the checkpoint handed them over (release it after {@code
     * finish}).
     */
    private record CopiesPlan(
            Set<String> copyIntoCheckpoint,
            Map<String, StreamStateHandle> copyFrom,
            Map<String, String> namedThrough,
            LsmSnapshot pinnedCopies) {}

    /**
     * Names each of {@code mayNotName} (files of the barrier's snapshot) through an identical copy:
     * the store's own copy when it has one that is still live ({@link LsmStore#rehomeAll}, also
     * made by the background copy), else a copy written into the checkpoint. Two cases need it: a
     * full checkpoint ({@code FORWARD}, Flink's first checkpoint after a NO_CLAIM resume) may not
     * name a file an earlier checkpoint or the restored one named; and no checkpoint may name a
     * restored file through its {@link RelativeFileStateHandle} (files Flink wrote with {@code
     * EXCLUSIVE} scope: a native savepoint's, or copies in a restored checkpoint), which Flink's
     * metadata serializer writes relative to the {@code _metadata} being written, so a restore from
     * this checkpoint would look for the file in this checkpoint's directory. The manifest stays
     * the barrier's: writes made after the barrier never enter this checkpoint.
     */
    private CopiesPlan planCopies(
            long checkpointId,
            boolean full,
            Set<String> mayNotName,
            Map<String, Long> sizes,
            Map<String, String> earlierCopies,
            Map<String, StreamStateHandle> earlierCheckpointCopies)
            throws Exception {
        if (!inheritedCopy.isDone()) {
            // the background copy is copying the same files: let it finish them
            long waitStart = System.nanoTime();
            inheritedCopy.awaitDone();
            LOG.info(
                    "Checkpoint {} waited {} ms for the background copy of inherited files",
                    checkpointId,
                    (System.nanoTime() - waitStart) / 1_000_000);
        }
        Map<String, String> copies = new HashMap<>(inheritedCopy.copies());
        copies.putAll(earlierCopies);
        copies.keySet().retainAll(mayNotName);
        if (full) {
            // nor through a copy an earlier checkpoint named (an earlier full one's)
            copies.values().removeIf(everReferenced::contains);
        }
        List<String> notCopied = new ArrayList<>(mayNotName);
        notCopied.removeAll(copies.keySet());
        copies.putAll(store.rehomeAll(notCopied));
        // pin the copies until they are handed over; one compacted away meanwhile is replaced by
        // a copy written into the checkpoint
        LsmSnapshot live = store.pinFiles();
        copies.values().retainAll(live.fileSizes().keySet());
        Set<String> copyIntoCheckpoint = new HashSet<>(mayNotName);
        copyIntoCheckpoint.removeAll(copies.keySet());
        // a file an earlier full checkpoint avoided is copied from that checkpoint's copy (the same
        // bytes): Flink may delete the original when that checkpoint completes, and a copy that is
        // gone too fails this checkpoint, never a restore
        Map<String, StreamStateHandle> copyFrom = new HashMap<>();
        for (String path : copyIntoCheckpoint) {
            copyFrom.put(
                    path,
                    copySource(path, sizes.get(path), earlierCopies, earlierCheckpointCopies));
        }
        LOG.info(
                "Checkpoint {}: {} file(s) it may not name where they are (named earlier, or"
                        + " restored with a relative handle) named through the store's copies,"
                        + " {} copied into the checkpoint",
                checkpointId,
                copies.size(),
                copyIntoCheckpoint.size());
        return new CopiesPlan(copyIntoCheckpoint, copyFrom, copies, live);
    }

    /**
     * Where to copy {@code path} from: the store copy an earlier full checkpoint named it through,
     * else the copy that checkpoint wrote into itself, else the file itself. The copies hold the
     * same bytes; the original may be deleted once that checkpoint completes.
     */
    private static StreamStateHandle copySource(
            String path,
            long size,
            Map<String, String> earlierCopies,
            Map<String, StreamStateHandle> earlierCheckpointCopies) {
        String storeCopy = earlierCopies.get(path);
        if (storeCopy != null) {
            return new FileStateHandle(new Path(storeCopy), size);
        }
        StreamStateHandle checkpointCopy = earlierCheckpointCopies.get(path);
        return checkpointCopy != null ? checkpointCopy : new FileStateHandle(new Path(path), size);
    }

    /**
     * Waits for the asynchronous parts of {@code fulls} to end, then returns the files they avoided
     * and puts the store copies they named them through into {@code copies} and the copies they
     * wrote into their checkpoints into {@code checkpointCopies}.
     */
    private Set<String> awaitFulls(
            long checkpointId,
            List<FullInFlight> fulls,
            Map<String, String> copies,
            Map<String, StreamStateHandle> checkpointCopies)
            throws IOException {
        long start = System.nanoTime();
        Set<String> avoided = new HashSet<>();
        for (FullInFlight f : fulls) {
            try {
                f.ended.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                InterruptedIOException io =
                        new InterruptedIOException(
                                "Checkpoint "
                                        + checkpointId
                                        + " was interrupted while waiting for a full checkpoint");
                io.initCause(e);
                throw io;
            } catch (ExecutionException e) {
                throw new IllegalStateException("never completed exceptionally", e);
            }
            avoided.addAll(f.avoided);
            copies.putAll(f.copies);
            checkpointCopies.putAll(f.checkpointCopies);
        }
        LOG.info(
                "Checkpoint {} waited {} ms for {} full checkpoint(s) begun before it; it names"
                        + " the files they avoided through copies",
                checkpointId,
                (System.nanoTime() - start) / 1_000_000,
                fulls.size());
        return avoided;
    }

    private SnapshotResult<KeyedStateHandle> finish(
            long checkpointId,
            CheckpointStreamFactory streamFactory,
            List<StateMetaInfoSnapshot> metaInfos,
            Map<String, Integer> stateIds,
            List<HeapPriorityQueueStateSnapshot<?>> timerSnapshots,
            byte[] manifest,
            Map<String, Long> files,
            Set<String> copyIntoCheckpoint,
            Map<String, StreamStateHandle> copyFrom,
            Map<String, String> namedThrough,
            boolean savepoint,
            Map<String, StreamStateHandle> copiesOut,
            CloseableRegistry streams)
            throws Exception {
        List<HandleAndLocalPath> shared = new ArrayList<>();
        Set<String> handedOver = new HashSet<>();
        long newBytes = 0;
        List<StreamStateHandle> copies = new ArrayList<>();
        try {
            for (Map.Entry<String, Long> f : files.entrySet()) {
                String path = f.getKey();
                String name = new Path(path).getName();
                StreamStateHandle handle;
                if (copyIntoCheckpoint.contains(path)) {
                    // a savepoint's copies are exclusive (relocatable with it, relative handles);
                    // a checkpoint's are shared state, named by later restores where they are
                    handle =
                            copy(
                                    copyFrom.getOrDefault(
                                            path,
                                            new FileStateHandle(new Path(path), f.getValue())),
                                    streamFactory,
                                    savepoint
                                            ? CheckpointedStateScope.EXCLUSIVE
                                            : CheckpointedStateScope.SHARED,
                                    streams);
                    copies.add(handle);
                    copiesOut.put(path, handle);
                    newBytes += f.getValue();
                } else if (namedThrough.containsKey(path)) {
                    // the manifest names the original; a restore finds the copy by that name
                    String copyPath = namedThrough.get(path);
                    handle = new FileStateHandle(new Path(copyPath), f.getValue());
                    handedOver.add(copyPath);
                    if (!everReferenced.contains(copyPath)) {
                        newBytes += f.getValue();
                    }
                } else if (restoredHandles.containsKey(path)) {
                    handle = restoredHandles.get(path);
                    Preconditions.checkState(
                            !(handle instanceof RelativeFileStateHandle),
                            "A restored relative handle must be named through a copy: %s",
                            path);
                } else {
                    handle = new FileStateHandle(new Path(path), f.getValue());
                    handedOver.add(path);
                    if (!everReferenced.contains(path)) {
                        newBytes += f.getValue();
                    }
                }
                shared.add(HandleAndLocalPath.of(handle, name));
            }
            StreamStateHandle meta =
                    writeMeta(
                            streamFactory, metaInfos, stateIds, timerSnapshots, manifest, streams);
            newBytes += meta.getStateSize();
            if (!savepoint) { // a savepoint copies every file: nothing of the store's handed over
                ownership.handedOver(checkpointId, handedOver);
                everReferenced.addAll(handedOver);
            }
            IncrementalRemoteKeyedStateHandle handle =
                    new IncrementalRemoteKeyedStateHandle(
                            backendId,
                            keyGroupRange,
                            checkpointId,
                            shared,
                            List.of(),
                            meta,
                            newBytes);
            long fileBytes = files.values().stream().mapToLong(Long::longValue).sum();
            figures.record(shared.size(), fileBytes + meta.getStateSize(), newBytes);
            return SnapshotResult.of(handle);
        } catch (Exception e) {
            for (StreamStateHandle c : copies) {
                try {
                    c.discardState();
                } catch (Exception suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw e;
        }
    }

    private StreamStateHandle copy(
            StreamStateHandle source,
            CheckpointStreamFactory streamFactory,
            CheckpointedStateScope scope,
            CloseableRegistry streams)
            throws IOException {
        CheckpointStateOutputStream out = streamFactory.createCheckpointStateOutputStream(scope);
        streams.registerCloseable(out);
        try (FSDataInputStream in = source.openInputStream()) {
            byte[] buf = new byte[1 << 16];
            int n;
            while ((n = in.read(buf)) > 0) {
                out.write(buf, 0, n);
            }
            return out.closeAndGetHandle();
        } finally {
            if (streams.unregisterCloseable(out)) {
                IOUtils.closeQuietly(out);
            }
        }
    }

    private StreamStateHandle writeMeta(
            CheckpointStreamFactory streamFactory,
            List<StateMetaInfoSnapshot> metaInfos,
            Map<String, Integer> stateIds,
            List<HeapPriorityQueueStateSnapshot<?>> timerSnapshots,
            byte[] manifest,
            CloseableRegistry streams)
            throws IOException {
        CheckpointStateOutputStream out =
                streamFactory.createCheckpointStateOutputStream(CheckpointedStateScope.EXCLUSIVE);
        streams.registerCloseable(out);
        try {
            DataOutputViewStreamWrapper view = new DataOutputViewStreamWrapper(out);
            MetaStreamFormat.writeHeader(view);
            new KeyedBackendSerializationProxy<>(keySerializer, metaInfos, false).write(view);
            MetaStreamFormat.writeStateIds(view, stateIds);
            MetaStreamFormat.writeManifest(view, manifest);
            TimerSnapshotFormat.write(view, timerSnapshots, keyGroupRange);
            return out.closeAndGetHandle();
        } finally {
            if (streams.unregisterCloseable(out)) {
                IOUtils.closeQuietly(out);
            }
        }
    }

    /** Flink discards the handle on the TaskManager: keep live files out of the discard. */
    private SnapshotResult<KeyedStateHandle> onDiscardedOnTaskManager(
            long checkpointId,
            SnapshotResult<KeyedStateHandle> result,
            Map<String, StreamStateHandle> ownCopies) {
        Set<String> delete = ownership.discarded(checkpointId);
        KeyedStateHandle h = result.getJobManagerOwnedSnapshot();
        if (!(h instanceof IncrementalRemoteKeyedStateHandle)) {
            return result;
        }
        IncrementalRemoteKeyedStateHandle full = (IncrementalRemoteKeyedStateHandle) h;
        // the copies made for this snapshot only; every other file it names is the store's, or
        // restored, or Flink's since an earlier checkpoint named it
        Set<StreamStateHandle> own = Collections.newSetFromMap(new IdentityHashMap<>());
        own.addAll(ownCopies.values());
        List<HandleAndLocalPath> deletable = new ArrayList<>();
        for (HandleAndLocalPath e : full.getSharedState()) {
            if (own.contains(e.getHandle())) {
                deletable.add(e);
            }
        }
        // files that went back to the store after it stopped using them: nobody else deletes them
        for (String f : delete) {
            everReferenced.remove(f);
            try {
                // Flink may discard on the interrupted thread of a cancelled task
                InterruptSafeDelete.delete(new Path(f));
            } catch (IOException e) {
                LOG.warn("Could not delete unreferenced file {}", f, e);
            }
        }
        LOG.info(
                "Snapshot {} discarded on the TaskManager; {} engine file(s) stay with the store",
                checkpointId,
                full.getSharedState().size() - deletable.size());
        return SnapshotResult.of(
                new IncrementalRemoteKeyedStateHandle(
                        full.getBackendIdentifier(),
                        full.getKeyGroupRange(),
                        full.getCheckpointId(),
                        deletable,
                        List.of(),
                        full.getMetaDataStateHandle(),
                        full.getCheckpointedSize()));
    }

    /** The background copy of inherited files this operation's full checkpoints wait for. */
    public InheritedFileCopier inheritedCopy() {
        return inheritedCopy;
    }

    public void notifyCheckpointComplete(long checkpointId) {
        if (!checkpointsTaken.remove(checkpointId)) {
            // a savepoint (a native one handed nothing over; a canonical one is written by Flink
            // from savepoint()): it settles nothing about older checkpoints, which Flink may
            // still complete, or discard on this TaskManager
            return;
        }
        checkpointsTaken.removeIf(id -> id < checkpointId); // subsumed, never notified
        ownership.completed(checkpointId);
    }

    public void notifyCheckpointAborted(long checkpointId) {
        checkpointsTaken.remove(checkpointId);
        // the JobManager registered whatever it received; the registry deletes it when unused
        ownership.aborted(checkpointId);
    }

    /**
     * Closes the store; files the store owns (never handed to Flink) are deleted. Every live file
     * becomes obsolete for the store: one still handed over to a snapshot whose fate is unknown is
     * deleted by that snapshot's discard on this TaskManager, if it comes (Flink may run it after
     * the dispose), and otherwise left to Flink's registry.
     */
    public void close() {
        // stop the background copy before the store: its unfinished copies are deleted
        inheritedCopy.close();
        // close first: it waits for a running flush or compaction, whose output must be listed;
        // on an interrupted thread (a cancelled task) it does not wait, and work ending later
        // deletes its own new files when it finds the store closed (LsmStore.install)
        store.close();
        List<String> live = store.liveFiles();
        int deleted = 0;
        int notDeleted = 0;
        int restored = 0;
        for (String f : live) {
            if (restoredHandles.containsKey(f)) {
                restored++;
            } else if (ownership.obsolete(f)) {
                try {
                    // a disposed task may be an interrupted one (a cancellation)
                    if (InterruptSafeDelete.delete(new Path(f))) {
                        deleted++;
                    } else {
                        notDeleted++; // not there
                    }
                } catch (IOException e) {
                    notDeleted++;
                    LOG.warn("Could not delete file {} of a disposed store", f, e);
                }
            }
        }
        // one line per dispose: which party each live file was left to (leak investigations)
        LOG.info(
                "Closed store of {}: {} live file(s), {} deleted, {} to delete not deleted, {}"
                        + " restored ones left, {} left to Flink's registry (handed over)",
                keyGroupRange,
                live.size(),
                deleted,
                notDeleted,
                restored,
                live.size() - deleted - notDeleted - restored);
    }
}
