package io.github.flinkstate.lru.snapshot;

import io.github.flinkstate.lru.cow.CowLruMap;
import io.github.flinkstate.lru.cow.CowSnapshot;
import java.io.IOException;
import java.util.concurrent.RunnableFuture;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.runtime.state.AsyncSnapshotCallable;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.StateUtil;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.util.concurrent.FutureUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The asynchronous part of a checkpoint of the LRU cache backend: completes the delegate's
 * snapshot, writes the cache entries the delegate did not have when the checkpoint started, and
 * packs both into one handle ({@link SnapshotEnvelope}). Always releases the frozen cache view,
 * also when cancelled.
 *
 * <p>Cancellation: cancelling this snapshot's I/O cancels the delegate's snapshot at once (so the
 * delegate stops uploading and deletes what it wrote), and {@link #toFuture} returns a future that
 * deletes a result completed after its cancellation, which nobody else would ever see.
 *
 * <p>Thread safety: runs once, on the checkpointing thread; cancellation may come from any thread.
 */
public final class CacheSnapshotCallable
        extends AsyncSnapshotCallable<SnapshotResult<KeyedStateHandle>> {

    private static final Logger LOG = LoggerFactory.getLogger(CacheSnapshotCallable.class);

    private final RunnableFuture<SnapshotResult<KeyedStateHandle>> delegateFuture;
    private final CowLruMap cache;
    private final CowSnapshot frozen;
    private final SnapshotStates states;
    private final KeyGroupRange keyGroupRange;
    private final long checkpointId;
    private final CheckpointStreamFactory streamFactory;

    public CacheSnapshotCallable(
            RunnableFuture<SnapshotResult<KeyedStateHandle>> delegateFuture,
            CowLruMap cache,
            CowSnapshot frozen,
            SnapshotStates states,
            KeyGroupRange keyGroupRange,
            long checkpointId,
            CheckpointStreamFactory streamFactory) {
        this.delegateFuture = delegateFuture;
        this.cache = cache;
        this.frozen = frozen;
        this.states = states;
        this.keyGroupRange = keyGroupRange;
        this.checkpointId = checkpointId;
        this.streamFactory = streamFactory;
        try {
            snapshotCloseableRegistry.registerCloseable(this::cancelDelegate);
        } catch (IOException e) {
            throw new IllegalStateException("a new snapshot's registry is open", e);
        }
    }

    /**
     * The future Flink runs and may cancel; registered in {@code taskRegistry} (the backend's
     * cancellation registry) so that disposing the backend cancels it.
     */
    public RunnableFuture<SnapshotResult<KeyedStateHandle>> toFuture(CloseableRegistry taskRegistry)
            throws IOException {
        return new DiscardingSnapshotFuture(this, taskRegistry);
    }

    /** Cancels this snapshot's I/O (and so the delegate's snapshot); see {@link #cancel()}. */
    void cancelSnapshot() {
        cancel();
    }

    private void cancelDelegate() {
        if (!delegateFuture.isDone()) {
            delegateFuture.cancel(true);
        }
    }

    @Override
    protected SnapshotResult<KeyedStateHandle> callInternal() throws Exception {
        SnapshotResult<KeyedStateHandle> delegateResult =
                FutureUtils.runIfNotDoneAndGet(delegateFuture);
        KeyedStateHandle delegateHandle =
                delegateResult == null ? null : delegateResult.getJobManagerOwnedSnapshot();
        if (delegateResult != null && delegateResult.getTaskLocalSnapshot() != null) {
            // a local copy without the cache entries could not restore correctly: drop it
            StateUtil.discardStateObjectQuietly(delegateResult.getTaskLocalSnapshot());
        }
        StreamStateHandle cacheStream = null;
        try {
            if (frozen != null) {
                byte kind = SnapshotEnvelope.delegateKind(delegateHandle);
                cacheStream =
                        new CacheSnapshotWriter(frozen, states, keyGroupRange)
                                .write(
                                        kind,
                                        kind == CacheSnapshotFormat.DELEGATE_KEY_GROUPS
                                                ? ((KeyGroupsStateHandle) delegateHandle)
                                                        .getGroupRangeOffsets()
                                                : null,
                                        streamFactory,
                                        snapshotCloseableRegistry);
            }
            KeyedStateHandle result =
                    SnapshotEnvelope.wrap(delegateHandle, cacheStream, checkpointId, keyGroupRange);
            return result == null ? SnapshotResult.empty() : SnapshotResult.of(result);
        } catch (Exception e) {
            discardDelegate();
            StateUtil.discardStateObjectQuietly(cacheStream);
            throw e;
        }
    }

    /**
     * Discards the delegate's part of this snapshot the way Flink discards a snapshot: cancel its
     * future, then discard what the future returns. Never the delegate's handle itself: a delegate
     * may name files its running store still reads (the disaggregated backend names every live
     * file) and reduce its handle for discarding only when its finished future is cancelled.
     */
    void discardDelegate() {
        try {
            StateUtil.discardStateFuture(delegateFuture);
        } catch (Exception e) {
            LOG.warn("Could not discard the delegate's part of snapshot {}", checkpointId, e);
        }
    }

    /** {@code full}'s cache stream alone, as a result to discard (the delegate's part kept). */
    SnapshotResult<KeyedStateHandle> cacheStreamOnly(SnapshotResult<KeyedStateHandle> full) {
        KeyedStateHandle only =
                SnapshotEnvelope.wrap(null, cacheStreamOf(full), checkpointId, keyGroupRange);
        return only == null ? SnapshotResult.empty() : SnapshotResult.of(only);
    }

    /**
     * The result to discard in place of {@code full}, a result of this snapshot that Flink is about
     * to discard (its finished future was cancelled): the cache stream, and the delegate's part as
     * the delegate's cancelled future returns it (see {@link #discardDelegate}).
     */
    SnapshotResult<KeyedStateHandle> reducedForDiscard(SnapshotResult<KeyedStateHandle> full)
            throws Exception {
        delegateFuture.cancel(true); // finished: a delegate may now reduce what get() returns
        SnapshotResult<KeyedStateHandle> delegate = delegateFuture.get();
        KeyedStateHandle reduced =
                SnapshotEnvelope.wrap(
                        delegate == null ? null : delegate.getJobManagerOwnedSnapshot(),
                        cacheStreamOf(full),
                        checkpointId,
                        keyGroupRange);
        return reduced == null ? SnapshotResult.empty() : SnapshotResult.of(reduced);
    }

    /** The cache stream of a result of this kind of snapshot, or null. */
    static StreamStateHandle cacheStreamOf(SnapshotResult<KeyedStateHandle> full) {
        KeyedStateHandle envelope = full == null ? null : full.getJobManagerOwnedSnapshot();
        return envelope == null ? null : SnapshotEnvelope.cacheStreamOf(envelope);
    }

    @Override
    protected void cleanupProvidedResources() {
        if (frozen != null) {
            cache.release(frozen.version());
        }
        if (!delegateFuture.isDone()) {
            delegateFuture.cancel(true);
        }
    }

    @Override
    protected void logAsyncSnapshotComplete(long startTime) {
        LOG.debug(
                "LRU cache snapshot of checkpoint {} ({} frozen entries) completed in {} ms",
                checkpointId,
                frozen == null ? 0 : frozen.size(),
                System.currentTimeMillis() - startTime);
    }
}
