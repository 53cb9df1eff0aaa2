package org.apache.flink.state.common;

import java.util.concurrent.RunnableFuture;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;

/**
 * Runs one materialization of a changelog keyed backend on the calling thread, the steps Flink's
 * {@link PeriodicMaterializationManager} runs on its timer, pool and mailbox threads: start it (the
 * delegate's synchronous snapshot), run the delegate's asynchronous snapshot, hand the result back.
 *
 * <p>In Flink's package only because {@code MaterializationRunnable#getMaterializationRunnable()}
 * is package-private. Thread safety: call on the backend's (test) thread.
 */
public final class MaterializationSteps {

    private MaterializationSteps() {}

    /** Materializes {@code target}; fails if there was nothing to materialize. */
    public static void materialize(PeriodicMaterializationManager.MaterializationTarget target)
            throws Exception {
        PeriodicMaterializationManager.MaterializationRunnable runnable =
                target.initMaterialization()
                        .orElseThrow(() -> new IllegalStateException("nothing to materialize"));
        RunnableFuture<SnapshotResult<KeyedStateHandle>> snapshot =
                runnable.getMaterializationRunnable();
        snapshot.run();
        target.handleMaterializationResult(
                snapshot.get(), runnable.getMaterializationID(), runnable.getMaterializedTo());
    }
}
