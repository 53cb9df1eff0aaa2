package io.github.flinkstate.changelog.registry;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import javax.annotation.Nullable;
import javax.annotation.concurrent.GuardedBy;
import javax.annotation.concurrent.ThreadSafe;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * TaskManager-side ownership of DSTL files: counts, per file, the change sets that still use it and
 * deletes the file when none does and no checkpoint may reference it.
 *
 * <p>Thread safety: all methods are thread-safe; deletion runs on the given executor.
 *
 * <p>Lifecycle of one file: {@link #track} with the number of change sets it holds (when its upload
 * won); each change set later either {@link #release releases} its reference (truncated, reset or
 * discarded) or the file is {@link #handOver handed over} to the JobManager (a checkpoint using it
 * was confirmed). From then on Flink's {@code SharedStateRegistry} owns it and this registry
 * forgets it.
 *
 * <p>Invariants (checked by {@link #checkInvariants()}):
 *
 * <ol>
 *   <li>every tracked file has a reference count &gt; 0;
 *   <li>a file is deleted at most once, and only when its count reaches 0 while still tracked;
 *   <li>a handed-over file is never deleted by this registry.
 * </ol>
 */
@ThreadSafe
public final class TaskFileRegistry {

    private static final Logger LOG = LoggerFactory.getLogger(TaskFileRegistry.class);

    private final Executor discardExecutor;

    @GuardedBy("this")
    private final Map<StreamStateHandle, Integer> refCounts = new HashMap<>();

    /** Local-recovery copies, deleted together with their (never handed over) remote file. */
    @GuardedBy("this")
    private final Map<StreamStateHandle, StreamStateHandle> localCopies = new HashMap<>();

    private final AtomicLong deletedFiles = new AtomicLong();

    public TaskFileRegistry(Executor discardExecutor) {
        this.discardExecutor = discardExecutor;
    }

    /** Starts tracking a newly uploaded file used by {@code changeSets} change sets. */
    public synchronized void track(StreamStateHandle file, int changeSets) {
        track(file, changeSets, null);
    }

    /**
     * Starts tracking a newly uploaded file and its optional local-recovery copy, which is deleted
     * with the file if the file is never handed over (a handed-over file's copy belongs to Flink's
     * local changelog registry).
     */
    public synchronized void track(
            StreamStateHandle file, int changeSets, @Nullable StreamStateHandle localCopy) {
        if (changeSets <= 0) {
            throw new IllegalArgumentException("A file must hold at least one change set");
        }
        Integer previous = refCounts.putIfAbsent(file, changeSets);
        if (previous != null) {
            throw new IllegalStateException("File is already tracked: " + file);
        }
        if (localCopy != null) {
            localCopies.put(file, localCopy);
        }
    }

    /**
     * Drops one change set's reference; deletes the file when it was the last one. A file that was
     * handed over (or never tracked) is ignored.
     */
    public void release(StreamStateHandle file) {
        boolean delete;
        StreamStateHandle localCopy = null;
        synchronized (this) {
            Integer count = refCounts.get(file);
            if (count == null) {
                return;
            }
            delete = count == 1;
            if (delete) {
                refCounts.remove(file);
                localCopy = localCopies.remove(file);
            } else {
                refCounts.put(file, count - 1);
            }
        }
        if (delete) {
            scheduleDelete(file);
            if (localCopy != null) {
                scheduleDelete(localCopy);
            }
        }
    }

    /** The JobManager now owns the file (a checkpoint using it completed): never delete it here. */
    public synchronized void handOver(StreamStateHandle file) {
        localCopies.remove(file);
        if (refCounts.remove(file) != null) {
            LOG.debug("DSTL file {} handed over to the JobManager", file);
        }
    }

    public synchronized boolean isTracked(StreamStateHandle file) {
        return refCounts.containsKey(file);
    }

    public synchronized int trackedFiles() {
        return refCounts.size();
    }

    public long deletedFiles() {
        return deletedFiles.get();
    }

    /** Verifies the invariants; for tests. */
    public synchronized void checkInvariants() {
        refCounts.forEach(
                (file, count) -> {
                    if (count <= 0) {
                        throw new IllegalStateException(
                                "Tracked file with non-positive count " + count + ": " + file);
                    }
                });
        localCopies
                .keySet()
                .forEach(
                        file -> {
                            if (!refCounts.containsKey(file)) {
                                throw new IllegalStateException(
                                        "Local copy of an untracked file: " + file);
                            }
                        });
    }

    private void scheduleDelete(StreamStateHandle file) {
        Runnable delete =
                () -> {
                    try {
                        file.discardState();
                        deletedFiles.incrementAndGet();
                        LOG.debug("Deleted DSTL file {} that no checkpoint uses", file);
                    } catch (Exception e) {
                        LOG.warn("Could not delete unused DSTL file {}", file, e);
                    }
                };
        try {
            discardExecutor.execute(delete);
        } catch (RejectedExecutionException e) {
            delete.run(); // the storage is closing: delete in the caller
        }
    }
}
