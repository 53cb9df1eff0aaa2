package io.github.flinkstate.lru.snapshot;

import java.io.Closeable;
import java.io.IOException;
import java.util.concurrent.FutureTask;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The future of one {@link CacheSnapshotCallable}. Like Flink's own snapshot task it cancels the
 * callable's I/O when it is cancelled and is cancelled when the backend's cancellation registry
 * closes. Unlike it, a result the callable completes after the future was cancelled is discarded
 * here: {@link FutureTask} drops such a result silently, nobody registers its files with the
 * JobManager, and they would stay on the checkpoint storage forever (an upload that ignores the
 * interrupt of the cancellation finishes after it).
 *
 * <p>A result completed before the cancellation is not touched here: {@code cancel} then returns
 * {@code false} and Flink discards what {@code get()} returns itself.
 *
 * <p>Thread safety: as {@link FutureTask}; {@code set} runs on the thread that runs the callable.
 */
final class DiscardingSnapshotFuture extends FutureTask<SnapshotResult<KeyedStateHandle>> {

    private static final Logger LOG = LoggerFactory.getLogger(DiscardingSnapshotFuture.class);

    private final CacheSnapshotCallable callable;
    private final CloseableRegistry taskRegistry;
    private final Closeable cancelOnClose = () -> cancel(true);

    DiscardingSnapshotFuture(CacheSnapshotCallable callable, CloseableRegistry taskRegistry)
            throws IOException {
        super(callable);
        this.callable = callable;
        this.taskRegistry = taskRegistry;
        taskRegistry.registerCloseable(cancelOnClose);
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        boolean cancelled = super.cancel(mayInterruptIfRunning);
        if (mayInterruptIfRunning) {
            callable.cancelSnapshot();
        }
        return cancelled;
    }

    @Override
    protected void set(SnapshotResult<KeyedStateHandle> result) {
        super.set(result);
        if (isCancelled() && result != null) {
            LOG.info("Deleting the files of a snapshot that completed after it was cancelled");
            try {
                result.discardState();
            } catch (Exception e) {
                LOG.warn("Could not delete the files of a cancelled snapshot", e);
            }
        }
    }

    @Override
    protected void done() {
        taskRegistry.unregisterCloseable(cancelOnClose);
    }
}
