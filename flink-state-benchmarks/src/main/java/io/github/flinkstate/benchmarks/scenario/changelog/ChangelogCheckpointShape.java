package io.github.flinkstate.benchmarks.scenario.changelog;

import java.io.DataInputStream;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.changelog.ChangelogStateBackendHandle;
import org.apache.flink.runtime.state.changelog.ChangelogStateHandle;
import org.apache.flink.runtime.state.changelog.ChangelogStateHandleStreamImpl;
import org.apache.flink.runtime.state.changelog.StateChange;
import org.apache.flink.runtime.state.changelog.StateChangelogHandleReader;
import org.apache.flink.runtime.state.changelog.StateChangelogStorageLoader;
import org.apache.flink.runtime.state.changelog.StateChangelogStorageView;
import org.apache.flink.util.CloseableIterator;

/**
 * What a restore of a changelog checkpoint has to read: the materialized part (delegate handles)
 * and the log part (changelog handles: segments, distinct files, stored bytes, and, by reading them
 * with the DSTL's own reader through Flink's storage loader, the number of changes and the time
 * that read alone takes, without applying the changes to a backend). Lets the scenario tell a
 * slower DSTL read from a larger log to replay. Immutable.
 *
 * @param materializedBytes state size of the materialized (delegate) handles
 * @param logHandles changelog handles (one per subtask and materialization)
 * @param logSegments (file, offset) pairs over all changelog handles
 * @param logFiles distinct files over all changelog handles
 * @param logStoredBytes state size of the changelog handles (bytes as stored)
 * @param logChanges state changes read back (all key groups of the handles)
 * @param logChangeBytes bytes of those changes (uncompressed payloads)
 * @param maxSubtaskChanges the most changes one subtask replays (a job's restore waits for its
 *     slowest subtask)
 * @param readMs wall time of reading every change with one fresh storage view (sequentially)
 * @param error why the checkpoint could not be inspected, or null if it was
 */
public record ChangelogCheckpointShape(
        long materializedBytes,
        long logHandles,
        long logSegments,
        long logFiles,
        long logStoredBytes,
        long logChanges,
        long logChangeBytes,
        long maxSubtaskChanges,
        long readMs,
        String error) {

    /** No changelog handles (changelog off). */
    public static final ChangelogCheckpointShape NONE = failed(null);

    /** Nothing measured because inspecting the checkpoint failed for {@code error}. */
    public static ChangelogCheckpointShape failed(String error) {
        return new ChangelogCheckpointShape(0, 0, 0, 0, 0, 0, 0, 0, 0, error);
    }

    /**
     * Loads the checkpoint's {@code _metadata} and measures its changelog handles.
     *
     * @param externalPath the checkpoint's external pointer (its directory)
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public static ChangelogCheckpointShape of(String externalPath, Configuration config)
            throws Exception {
        Path metadata = new Path(externalPath, "_metadata");
        CheckpointMetadata checkpoint;
        try (FSDataInputStream in = metadata.getFileSystem().open(metadata)) {
            checkpoint =
                    Checkpoints.loadCheckpointMetadata(
                            new DataInputStream(in),
                            ChangelogCheckpointShape.class.getClassLoader(),
                            externalPath);
        }
        long materialized = 0;
        long handles = 0;
        long segments = 0;
        long stored = 0;
        long changes = 0;
        long changeBytes = 0;
        long readNanos = 0;
        long maxSubtask = 0;
        Set<String> files = new HashSet<>();
        StateChangelogStorageView view = null;
        try {
            for (OperatorState operator : checkpoint.getOperatorStates()) {
                for (OperatorSubtaskState subtask : operator.getStates()) {
                    long subtaskChanges = 0;
                    for (KeyedStateHandle keyed : subtask.getManagedKeyedState()) {
                        if (!(keyed instanceof ChangelogStateBackendHandle)) {
                            continue;
                        }
                        ChangelogStateBackendHandle cl = (ChangelogStateBackendHandle) keyed;
                        for (KeyedStateHandle m : cl.getMaterializedStateHandles()) {
                            materialized += m.getStateSize();
                        }
                        for (ChangelogStateHandle log : cl.getNonMaterializedStateHandles()) {
                            handles++;
                            stored += log.getStateSize();
                            if (log instanceof ChangelogStateHandleStreamImpl stream) {
                                List<Tuple2<StreamStateHandle, Long>> parts =
                                        stream.getHandlesAndOffsets();
                                segments += parts.size();
                                parts.forEach(
                                        p ->
                                                files.add(
                                                        p.f0.getStreamStateHandleID()
                                                                .getKeyString()));
                            }
                            if (view == null) {
                                view = StateChangelogStorageLoader.loadFromStateHandle(config, log);
                            }
                            StateChangelogHandleReader reader = view.createReader();
                            long start = System.nanoTime();
                            try (CloseableIterator<StateChange> it = reader.getChanges(log)) {
                                while (it.hasNext()) {
                                    changes++;
                                    subtaskChanges++;
                                    changeBytes += it.next().getChange().length;
                                }
                            }
                            readNanos += System.nanoTime() - start;
                        }
                    }
                    maxSubtask = Math.max(maxSubtask, subtaskChanges);
                }
            }
        } finally {
            if (view != null) {
                view.close();
            }
        }
        return new ChangelogCheckpointShape(
                materialized,
                handles,
                segments,
                files.size(),
                stored,
                changes,
                changeBytes,
                maxSubtask,
                readNanos / 1_000_000,
                null);
    }

    @Override
    public String toString() {
        if (error != null) {
            return "checkpoint not inspected: " + error;
        }
        return String.format(
                java.util.Locale.ROOT,
                "materialized %.1f MiB, log: %d handles, %d segments, %d files, %.1f MiB stored,"
                        + " %d changes (%.1f MiB, at most %d per subtask), read alone in %d ms",
                materializedBytes / 1048576.0,
                logHandles,
                logSegments,
                logFiles,
                logStoredBytes / 1048576.0,
                logChanges,
                logChangeBytes / 1048576.0,
                maxSubtaskChanges,
                readMs);
    }
}
