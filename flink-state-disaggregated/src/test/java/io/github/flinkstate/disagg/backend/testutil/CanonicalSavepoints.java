package io.github.flinkstate.disagg.backend.testutil;

import java.util.concurrent.RunnableFuture;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.SavepointType;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SavepointResources;
import org.apache.flink.runtime.state.SavepointSnapshotStrategy;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.SnapshotStrategyRunner;

/** Canonical savepoints taken as Flink's operator state handler takes them. */
public final class CanonicalSavepoints {

    private CanonicalSavepoints() {}

    /**
     * The synchronous part ({@code savepoint()} on the calling thread, which stands for the task
     * thread); run the returned future for the asynchronous part, which Flink's {@link
     * SavepointSnapshotStrategy} writes from the backend's resources.
     */
    public static <K> RunnableFuture<SnapshotResult<KeyedStateHandle>> start(
            AbstractKeyedStateBackend<K> b, long id, CheckpointStreamFactory streams)
            throws Exception {
        SavepointResources<K> resources = b.savepoint();
        return new SnapshotStrategyRunner<>(
                        "canonical savepoint",
                        new SavepointSnapshotStrategy<>(resources.getSnapshotResources()),
                        new CloseableRegistry(),
                        resources.getPreferredSnapshotExecutionType())
                .snapshot(
                        id,
                        0L,
                        streams,
                        new CheckpointOptions(
                                SavepointType.savepoint(SavepointFormatType.CANONICAL),
                                CheckpointStorageLocationReference.getDefault()));
    }
}
