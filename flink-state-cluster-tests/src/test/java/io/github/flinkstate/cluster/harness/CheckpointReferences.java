package io.github.flinkstate.cluster.harness;

import java.io.DataInputStream;
import java.io.IOException;
import java.util.Collection;
import java.util.HashSet;
import java.util.Set;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.state.AbstractChannelStateHandle;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.OperatorStreamStateHandle;
import org.apache.flink.runtime.state.StateObject;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.changelog.ChangelogStateBackendHandle;
import org.apache.flink.runtime.state.changelog.ChangelogStateHandleStreamImpl;
import org.apache.flink.runtime.state.changelog.inmemory.InMemoryChangelogStateHandle;
import org.apache.flink.runtime.state.memory.ByteStreamStateHandle;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * The files a retained checkpoint or savepoint references, read from its {@code _metadata} with
 * Flink's own {@link Checkpoints#loadCheckpointMetadata} and a walk over every state handle type
 * that can appear in metadata (keyed: incremental, key-groups, changelog; operator; channel state;
 * the coordinator state). A handle type the walk does not know fails loudly, so a new kind of
 * handle cannot hide files.
 *
 * <p>Paths are compared by their path component only ({@code /checkpoints/...}), because the same
 * HDFS is reached as {@code hdfs://127.0.0.1:port} by the cluster and {@code hdfs://localhost:port}
 * by the test JVM.
 *
 * <p>Stateless and thread-safe.
 */
public final class CheckpointReferences {

    private CheckpointReferences() {}

    /**
     * The metadata file and every file its state handles reference, as path components.
     *
     * @param checkpointUri the checkpoint's or savepoint's directory as Flink reported it ({@code
     *     hdfs://host:port/...}); relative handles of savepoints are resolved against it
     */
    public static Set<String> of(FileSystem fs, String checkpointUri) throws IOException {
        Path metadata = new Path(java.net.URI.create(checkpointUri).getPath(), "_metadata");
        CheckpointMetadata m;
        try (DataInputStream in = new DataInputStream(fs.open(metadata))) {
            m =
                    Checkpoints.loadCheckpointMetadata(
                            in, CheckpointReferences.class.getClassLoader(), checkpointUri);
        }
        Set<String> files = new HashSet<>();
        files.add(metadata.toUri().getPath());
        for (OperatorState op : m.getOperatorStates()) {
            visit(op.getCoordinatorState(), files);
            for (OperatorSubtaskState s : op.getStates()) {
                visitAll(s.getManagedKeyedState(), files);
                visitAll(s.getRawKeyedState(), files);
                visitAll(s.getManagedOperatorState(), files);
                visitAll(s.getRawOperatorState(), files);
                visitAll(s.getInputChannelState(), files);
                visitAll(s.getResultSubpartitionState(), files);
            }
        }
        return files;
    }

    private static void visitAll(Collection<? extends StateObject> handles, Set<String> files) {
        for (StateObject h : handles) {
            visit(h, files);
        }
    }

    private static void visit(StateObject h, Set<String> files) {
        if (h == null
                || h instanceof ByteStreamStateHandle
                || h instanceof InMemoryChangelogStateHandle) {
            return; // inline in the metadata
        }
        if (h instanceof IncrementalRemoteKeyedStateHandle inc) {
            inc.getSharedState().forEach(s -> visit(s.getHandle(), files));
            inc.getPrivateState().forEach(s -> visit(s.getHandle(), files));
            visit(inc.getMetaDataStateHandle(), files);
        } else if (h instanceof KeyGroupsStateHandle kg) {
            visit(kg.getDelegateStateHandle(), files);
        } else if (h instanceof ChangelogStateBackendHandle cl) {
            visitAll(cl.getMaterializedStateHandles(), files);
            visitAll(cl.getNonMaterializedStateHandles(), files);
        } else if (h instanceof ChangelogStateHandleStreamImpl log) {
            for (Tuple2<StreamStateHandle, Long> part : log.getHandlesAndOffsets()) {
                visit(part.f0, files);
            }
        } else if (h instanceof OperatorStreamStateHandle op) {
            visit(op.getDelegateStateHandle(), files);
        } else if (h instanceof AbstractChannelStateHandle<?> ch) {
            visit(ch.getDelegate(), files);
        } else if (h instanceof StreamStateHandle stream && stream.maybeGetPath().isPresent()) {
            files.add(stream.maybeGetPath().get().toUri().getPath());
        } else {
            throw new IllegalStateException(
                    "unknown state handle type in checkpoint metadata: " + h.getClass().getName());
        }
    }
}
