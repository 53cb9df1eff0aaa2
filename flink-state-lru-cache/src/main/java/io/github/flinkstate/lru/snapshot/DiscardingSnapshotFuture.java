package io.github.flinkstate.lru.snapshot;

import java.io.Closeable;
import java.io.IOException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.StateUtil;
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
 * <p>A result completed before the cancellation is not discarded here: {@code cancel} then returns
 * {@code false} and Flink discards what {@code get()} returns itself, so from then on {@code get()}
 * returns the result with the delegate's part as the delegate's own cancelled future returns it
 * ({@link CacheSnapshotCallable#reducedForDiscard}): a delegate may name files its running store
 * still reads and protect them only that way (the disaggregated backend).
 *
 * <p>Thread safety: as {@link FutureTask}; {@code set} runs on the thread that runs the callable.
 */
final class DiscardingSnapshotFuture extends FutureTask<SnapshotResult<KeyedStateHandle>> {

    private static final Logger LOG = LoggerFactory.getLogger(DiscardingSnapshotFuture.class);

    private final CacheSnapshotCallable callable;
    private final CloseableRegistry taskRegistry;
    private final Closeable cancelOnClose = this::onRegistryClose;

    /** What {@code get()} returns once a finished future was cancelled (see the class comment). */
    private volatile SnapshotResult<KeyedStateHandle> reduced;

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
        if (mayInterruptIfRunning || cancelled) {
            // also without interrupt: a future cancelled before it ran never runs the callable,
            // which alone would release the frozen cache version and the delegate's snapshot
            callable.cancelSnapshot();
        }
        if (!cancelled && isDone() && !isCancelled() && reduced == null) {
            reduceForDiscard();
        }
        return cancelled;
    }

    /**
     * Closing the backend's cancellation registry (dispose, task cancellation) cancels a running
     * snapshot; a finished one is left as it is: its result may be reported at this very moment
     * (the registry copied its closeables before this future unregistered), so only Flink's own
     * cancel of the finished future, which precedes its discard, reduces it.
     */
    private void onRegistryClose() {
        super.cancel(true);
        callable.cancelSnapshot();
    }

    private void reduceForDiscard() {
        SnapshotResult<KeyedStateHandle> full;
        try {
            full = super.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        } catch (ExecutionException e) {
            return; // the snapshot failed: no result to discard
        }
        SnapshotResult<KeyedStateHandle> r;
        try {
            r = callable.reducedForDiscard(full);
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            // without the delegate's reduced part, keep its files (a leak) rather than delete
            // files its running store may still read
            LOG.warn("Discarding only the cache stream of a cancelled snapshot", e);
            r = callable.cacheStreamOnly(full);
        }
        synchronized (this) {
            if (reduced == null) {
                reduced = r;
            }
        }
    }

    @Override
    public SnapshotResult<KeyedStateHandle> get() throws InterruptedException, ExecutionException {
        SnapshotResult<KeyedStateHandle> r = super.get();
        SnapshotResult<KeyedStateHandle> red = reduced;
        return red != null ? red : r;
    }

    @Override
    protected void set(SnapshotResult<KeyedStateHandle> result) {
        super.set(result);
        if (isCancelled() && result != null) {
            LOG.info("Deleting the files of a snapshot that completed after it was cancelled");
            // the cache stream here, the delegate's part through its own future
            StateUtil.discardStateObjectQuietly(CacheSnapshotCallable.cacheStreamOf(result));
            callable.discardDelegate();
        }
    }

    @Override
    protected void done() {
        taskRegistry.unregisterCloseable(cancelOnClose);
    }
}
