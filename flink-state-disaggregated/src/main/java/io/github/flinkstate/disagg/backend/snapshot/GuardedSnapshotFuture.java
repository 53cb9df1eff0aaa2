package io.github.flinkstate.disagg.backend.snapshot;

import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.function.Function;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The future of one snapshot's asynchronous part. Flink discards the result of a snapshot that
 * failed on the TaskManager by calling {@code cancel} on the finished future and then {@code
 * discardState()} on what {@code get()} returns (Flink's {@code StateUtil.discardStateFuture}); an
 * unregistered {@code IncrementalRemoteKeyedStateHandle} deletes every shared file it names,
 * including files the running store still reads. So once {@code cancel} has been called on a
 * finished future, {@code get()} returns the handle reduced by {@code onDiscard} (files the store
 * still needs removed) and ownership of those files goes back to the store.
 *
 * <p>A snapshot cancelled while its asynchronous part runs may still produce a handle (an upload
 * that ignores the interrupt): {@code FutureTask} would drop it silently, leaving its files to
 * nobody. Such a late result is reduced the same way and discarded here.
 *
 * <p>Thread safety: as {@link FutureTask}.
 */
final class GuardedSnapshotFuture extends FutureTask<SnapshotResult<KeyedStateHandle>> {

    private static final Logger LOG = LoggerFactory.getLogger(GuardedSnapshotFuture.class);

    private final Function<SnapshotResult<KeyedStateHandle>, SnapshotResult<KeyedStateHandle>>
            onDiscard;
    private final Runnable onDone;
    private final Runnable onCancelWhileRunning;
    private volatile SnapshotResult<KeyedStateHandle> reduced;

    GuardedSnapshotFuture(
            Callable<SnapshotResult<KeyedStateHandle>> asyncPart,
            Function<SnapshotResult<KeyedStateHandle>, SnapshotResult<KeyedStateHandle>> onDiscard,
            Runnable onDone,
            Runnable onCancelWhileRunning) {
        super(asyncPart);
        this.onDiscard = onDiscard;
        this.onDone = onDone;
        this.onCancelWhileRunning = onCancelWhileRunning;
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        boolean cancelled = super.cancel(mayInterruptIfRunning);
        if (cancelled) {
            onCancelWhileRunning.run(); // close the snapshot's open streams
        }
        // a future cancelled earlier (a registry close while it ran) has no result to reduce: its
        // late result was discarded when it arrived (set)
        if (!cancelled && isDone() && !isCancelled() && reduced == null) {
            try {
                SnapshotResult<KeyedStateHandle> full = super.get();
                synchronized (this) {
                    if (reduced == null) {
                        reduced = onDiscard.apply(full);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException e) {
                // the async part failed: there is no handle to protect
            }
        }
        return cancelled;
    }

    /**
     * What closing the backend's snapshot registry does to this snapshot (task cancellation or
     * dispose): stops it if it still runs, and nothing else. A finished snapshot's result may
     * already be on its way to the JobManager (Flink's checkpoint thread can return from {@code
     * get} before {@code done()} unregisters this future), so its files stay handed over; if Flink
     * does not send it, it discards it ({@link #cancel} then {@code get}), which gives them back.
     */
    void onRegistryClose() {
        if (super.cancel(true)) {
            onCancelWhileRunning.run(); // close the snapshot's open streams
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
        if (isCancelled()) {
            // cancelled while running: nobody will ever get this result
            try {
                onDiscard.apply(result).discardState();
            } catch (Exception e) {
                LOG.warn("Could not discard the result of a cancelled snapshot", e);
            }
        }
    }

    @Override
    protected void done() {
        onDone.run();
    }
}
