package io.github.flinkstate.changelog.upload;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.changelog.ChangelogStateHandleStreamImpl;

/**
 * Builds the {@link SnapshotResult} of a persist call from its uploaded change sets: the
 * JobManager-owned {@link ChangelogStateHandleStreamImpl} (one {@code (file, offset)} per change
 * set, in sequence-number order) and, when every change set has a local-recovery copy, the
 * task-local handle with the same offsets.
 *
 * <p>Thread safety: stateless; the caller holds the writer's lock because the change-set states are
 * updated (handed-out checkpoint, incremental-size reporting).
 *
 * <p>Sizes: the state size is the sum of the segment sizes; the incremental (checkpointed) size
 * counts each segment only in the first persist result that contains it.
 */
final class PersistResults {

    private PersistResults() {}

    static SnapshotResult<ChangelogStateHandleStreamImpl> build(
            List<ChangeSetState> changeSets,
            long checkpointId,
            KeyGroupRange keyGroupRange,
            String storageIdentifier,
            List<StreamStateHandle> localFilesOut) {
        if (changeSets.isEmpty()) {
            return SnapshotResult.empty();
        }
        List<Tuple2<StreamStateHandle, Long>> handles = new ArrayList<>();
        List<Tuple2<StreamStateHandle, Long>> localHandles = new ArrayList<>();
        long size = 0;
        long incremental = 0;
        for (ChangeSetState state : changeSets) {
            UploadResult uploaded = state.result;
            handles.add(Tuple2.of(uploaded.file(), uploaded.offset()));
            uploaded.naming().named(checkpointId);
            if (uploaded.localFile() != null) {
                localHandles.add(Tuple2.of(uploaded.localFile(), uploaded.offset()));
                localFilesOut.add(uploaded.localFile());
            }
            size += uploaded.size();
            if (!state.reportedIncrementally) {
                state.reportedIncrementally = true;
                incremental += uploaded.size();
            }
            state.firstCheckpoint = Math.min(state.firstCheckpoint, checkpointId);
            state.lastCheckpoint = Math.max(state.lastCheckpoint, checkpointId);
        }
        ChangelogStateHandleStreamImpl remote =
                new ChangelogStateHandleStreamImpl(
                        handles, keyGroupRange, size, incremental, storageIdentifier);
        if (localHandles.size() != handles.size()) {
            return SnapshotResult.of(remote);
        }
        return SnapshotResult.withLocalState(
                remote,
                new ChangelogStateHandleStreamImpl(
                        localHandles, keyGroupRange, size, 0, storageIdentifier));
    }
}
