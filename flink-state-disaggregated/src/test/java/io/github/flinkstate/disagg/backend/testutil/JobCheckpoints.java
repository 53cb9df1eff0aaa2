package io.github.flinkstate.disagg.backend.testutil;

import java.io.DataInputStream;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.checkpoint.CheckpointProperties;
import org.apache.flink.runtime.checkpoint.CheckpointRetentionPolicy;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.CheckpointsCleaner;
import org.apache.flink.runtime.checkpoint.CompletedCheckpoint;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.StandaloneCompletedCheckpointStore;
import org.apache.flink.runtime.checkpoint.StateAssignmentOperation;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.state.CheckpointMetadataOutputStream;
import org.apache.flink.runtime.state.CheckpointStorageAccess;
import org.apache.flink.runtime.state.CheckpointStorageLocation;
import org.apache.flink.runtime.state.CompletedCheckpointStorageLocation;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SharedStateRegistry;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.apache.flink.util.InstantiationUtil;
import org.apache.flink.util.concurrent.Executors;

/**
 * The JobManager's side of the checkpoints of one keyed operator, built from Flink's own classes
 * and driven the way {@code CheckpointCoordinator} drives them:
 *
 * <ul>
 *   <li>checkpoint locations from a real {@link FileSystemCheckpointStorage} (every stream a file,
 *       threshold 0);
 *   <li>an acknowledgement registers the subtask's handle in the {@link SharedStateRegistry} right
 *       away (Flink does so for every acknowledgement, also of checkpoints aborted later), after a
 *       Java-serialization copy as the RPC makes;
 *   <li>completion writes the checkpoint's {@code _metadata} with Flink's {@link Checkpoints}
 *       serializer and adds it to a {@link StandaloneCompletedCheckpointStore}, which subsumes old
 *       checkpoints through a {@link CheckpointsCleaner} (direct executors);
 *   <li>an abort discards the JobManager's (registered) copies of the handles and the location;
 *   <li>a restore reads a retained checkpoint's {@code _metadata} back (the handles a task gets)
 *       and, for a new job, registers it as {@code CheckpointCoordinator#restoreSavepoint} does for
 *       the claim mode.
 * </ul>
 *
 * <p>Thread safety: not thread-safe (test thread only).
 */
public final class JobCheckpoints {

    /** The operator whose keyed state all checkpoints hold (the same in every job). */
    public static final OperatorID OPERATOR = new OperatorID(42L, 42L);

    private final JobID jobId = new JobID();
    private final CheckpointStorageAccess storage;
    private final StandaloneCompletedCheckpointStore store;
    private final CheckpointsCleaner cleaner = new CheckpointsCleaner();
    private final CheckpointProperties props;
    private final Map<Long, Pending> pending = new HashMap<>();

    private static final class Pending {
        final CheckpointStorageLocation location;
        final Map<Integer, KeyedStateHandle> acknowledged = new HashMap<>();

        Pending(CheckpointStorageLocation location) {
            this.location = location;
        }
    }

    /**
     * A job whose checkpoints go to {@code checkpointDir}, retaining {@code retained} completed
     * checkpoints; {@code retainOnCancel} keeps the retained ones when the job is cancelled.
     */
    public JobCheckpoints(
            String checkpointDir, int retained, boolean retainOnCancel, RecoveryClaimMode mode)
            throws Exception {
        this.storage =
                new FileSystemCheckpointStorage(new Path(checkpointDir), 0, -1)
                        .createCheckpointStorage(jobId);
        storage.initializeBaseLocationsForCheckpoint();
        this.store =
                new StandaloneCompletedCheckpointStore(
                        retained,
                        SharedStateRegistry.DEFAULT_FACTORY,
                        Executors.directExecutor(),
                        mode);
        this.props =
                CheckpointProperties.forCheckpoint(
                        retainOnCancel
                                ? CheckpointRetentionPolicy.RETAIN_ON_CANCELLATION
                                : CheckpointRetentionPolicy.NEVER_RETAIN_AFTER_TERMINATION);
    }

    public JobID jobId() {
        return jobId;
    }

    /** Starts checkpoint {@code id}: its location is the tasks' stream factory. */
    public CheckpointStorageLocation start(long id) throws Exception {
        CheckpointStorageLocation location = storage.initializeLocationForCheckpoint(id);
        pending.put(id, new Pending(location));
        return location;
    }

    /** Subtask {@code subtask} acknowledges checkpoint {@code id} with {@code handle}. */
    public void acknowledge(long id, int subtask, KeyedStateHandle handle) throws Exception {
        KeyedStateHandle received =
                handle == null
                        ? null
                        : InstantiationUtil.clone(handle, getClass().getClassLoader());
        if (received != null) {
            received.registerSharedStates(store.getSharedStateRegistry(), id);
        }
        pending.get(id).acknowledged.put(subtask, received);
    }

    /**
     * An acknowledgement of checkpoint {@code id} that arrives after the JobManager aborted it (it
     * expired, another task declined it, the job failed over): {@code CheckpointCoordinator}
     * registers the received handle's shared state, then discards the handle.
     */
    public void lateAcknowledge(long id, KeyedStateHandle handle) throws Exception {
        if (pending.containsKey(id)) {
            throw new IllegalStateException("checkpoint " + id + " is still pending");
        }
        KeyedStateHandle received = InstantiationUtil.clone(handle, getClass().getClassLoader());
        received.registerSharedStates(store.getSharedStateRegistry(), id);
        received.discardState();
    }

    /** Completes checkpoint {@code id} of {@code parallelism} subtasks (all acknowledged). */
    public CompletedCheckpoint complete(long id, int parallelism) throws Exception {
        Pending p = pending.remove(id);
        OperatorState op =
                new OperatorState(
                        null, null, OPERATOR, parallelism, DisaggBackends.MAX_PARALLELISM);
        for (int i = 0; i < parallelism; i++) {
            KeyedStateHandle h = p.acknowledged.get(i);
            op.putState(
                    i,
                    h == null
                            ? OperatorSubtaskState.builder().build()
                            : OperatorSubtaskState.builder().setManagedKeyedState(h).build());
        }
        CompletedCheckpointStorageLocation finalized;
        try (CheckpointMetadataOutputStream out = p.location.createMetadataOutputStream()) {
            Checkpoints.storeCheckpointMetadata(
                    new CheckpointMetadata(id, List.of(op), List.of(), props), out);
            finalized = out.closeAndFinalizeCheckpoint();
        }
        CompletedCheckpoint cp =
                new CompletedCheckpoint(
                        jobId, id, 0L, 0L, Map.of(OPERATOR, op), List.of(), props, finalized, null);
        store.addCheckpointAndSubsumeOldestOne(cp, cleaner, () -> {});
        return cp;
    }

    /** Aborts pending checkpoint {@code id}: the JobManager discards what it received. */
    public void abort(long id) throws Exception {
        Pending p = pending.remove(id);
        for (KeyedStateHandle h : p.acknowledged.values()) {
            if (h != null) {
                h.discardState();
            }
        }
        p.location.disposeOnFailure();
    }

    /** The retained completed checkpoints, oldest first. */
    public List<CompletedCheckpoint> retained() {
        return store.getAllCheckpoints();
    }

    /** Ends the job: the store discards what the retention policy does not keep. */
    public void shutdown(JobStatus status) throws Exception {
        store.shutdown(status, cleaner);
    }

    /**
     * The handles a subtask with {@code range} gets from {@code checkpoint}: its {@code _metadata}
     * read back with Flink's serializer (every handle round-trips the metadata format), then
     * Flink's key-group assignment.
     */
    public static List<KeyedStateHandle> handlesFor(
            CompletedCheckpoint checkpoint, KeyGroupRange range) throws Exception {
        return StateAssignmentOperation.getManagedKeyedStateHandles(
                load(checkpoint).getOperatorStates().iterator().next(), range);
    }

    /** The paths of the engine files (shared state) that {@code checkpoint} names, all subtasks. */
    public static List<String> engineFiles(CompletedCheckpoint checkpoint) throws Exception {
        List<String> files = new ArrayList<>();
        for (KeyedStateHandle h : handlesFor(checkpoint, DisaggBackends.ALL)) {
            for (var e : ((IncrementalRemoteKeyedStateHandle) h).getSharedState()) {
                files.add(((FileStateHandle) e.getHandle()).getFilePath().toString());
            }
        }
        return files;
    }

    private static CheckpointMetadata load(CompletedCheckpoint checkpoint) throws Exception {
        try (InputStream in = checkpoint.getMetadataHandle().openInputStream()) {
            return Checkpoints.loadCheckpointMetadata(
                    new DataInputStream(in),
                    JobCheckpoints.class.getClassLoader(),
                    checkpoint.getExternalPointer());
        }
    }

    /**
     * A new job restores {@code checkpoint} of an earlier job in {@code mode}: registers it as
     * {@code CheckpointCoordinator#restoreSavepoint} does and returns the restored checkpoint (its
     * handles are what the tasks get). The new job's checkpoint ids continue after it.
     */
    public CompletedCheckpoint restore(CompletedCheckpoint checkpoint, RecoveryClaimMode mode)
            throws Exception {
        CompletedCheckpointStorageLocation location =
                storage.resolveCheckpoint(checkpoint.getExternalPointer());
        CheckpointMetadata metadata = load(checkpoint);
        Map<OperatorID, OperatorState> states = new HashMap<>();
        for (OperatorState s : metadata.getOperatorStates()) {
            states.put(s.getOperatorID(), s);
        }
        CheckpointProperties restoredProps =
                mode == RecoveryClaimMode.CLAIM
                        ? props
                        : CheckpointProperties.forUnclaimedSnapshot();
        CompletedCheckpoint restored =
                new CompletedCheckpoint(
                        jobId,
                        metadata.getCheckpointId(),
                        0L,
                        0L,
                        states,
                        new ArrayList<>(metadata.getMasterStates()),
                        restoredProps,
                        location,
                        null,
                        metadata.getCheckpointProperties());
        restored.registerSharedStatesAfterRestored(store.getSharedStateRegistry(), mode);
        store.addCheckpointAndSubsumeOldestOne(restored, cleaner, () -> {});
        return restored;
    }
}
