package io.github.flinkstate.changelog.registry;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
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
 * <p>References in doubt: a change set that was handed out in the persist result of checkpoint
 * {@code L}, but was never confirmed, may belong to a completed checkpoint (whose confirmation the
 * task skipped) or to an aborted one whose acknowledgement never reached the JobManager (then
 * nobody else would ever delete its file). Such a reference is {@link #releaseWhenSubsumed kept}
 * until {@code num-retained} checkpoints newer than {@code L} were confirmed on this TaskManager:
 * by then the JobManager no longer retains {@code L} even if it completed, so deleting is safe (the
 * JobManager deleting it too is harmless), and it is released. Confirmations are counted across all
 * writers of the job here (checkpoint ids are job-wide). A writer that closes hands over the files
 * on which it still has a reference in doubt ({@link #handOverInDoubt}): a job restored from the
 * retained checkpoint carries its log handles into later checkpoints, so its successors'
 * confirmations do not tell that those files are unused. A reference in doubt belongs to the writer
 * that made it: a file several writers share is handed over only by a writer whose own doubt is
 * unresolved, never because another writer's reference keeps it tracked.
 *
 * <p>Aborted checkpoints ({@link #releaseWhenResetSubsumed}): an abort does not prove that the
 * JobManager dropped the checkpoint (a write to its highly available checkpoint store that failed
 * in doubt aborts it on the tasks, and a JobManager failover may restore it), so the files only an
 * aborted checkpoint used are kept in doubt too. At close, only the doubts of the writer's newest
 * aborted checkpoint are handed over: a JobManager restores the newest checkpoint it holds, so an
 * older aborted one is not the one it could restore, and handing over every aborted checkpoint of a
 * run of aborts (checkpoints expiring under back-pressure until the task fails over) would leave a
 * copy of the log per abort behind.
 *
 * <p>Invariants (checked by {@link #checkInvariants()}):
 *
 * <ol>
 *   <li>every tracked file has a reference count &gt; 0;
 *   <li>a file is deleted at most once, and only when its count reaches 0 while still tracked;
 *   <li>a handed-over file is never deleted by this registry;
 *   <li>every reference in doubt is on a tracked file, and its checkpoint is not yet subsumed.
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

    /** References in doubt: one entry per change set reference, with its last checkpoint. */
    @GuardedBy("this")
    private final List<Doubtful> inDoubt = new ArrayList<>();

    /** The {@code retained} highest checkpoint ids confirmed on this TaskManager. */
    @GuardedBy("this")
    private final TreeSet<Long> latestConfirmed = new TreeSet<>();

    private final int retained;

    private final AtomicLong deletedFiles = new AtomicLong();

    public TaskFileRegistry(Executor discardExecutor) {
        this(discardExecutor, 1);
    }

    /**
     * @param retained how many completed checkpoints the JobManager retains ({@code
     *     execution.checkpointing.num-retained})
     */
    public TaskFileRegistry(Executor discardExecutor, int retained) {
        if (retained <= 0) {
            throw new IllegalArgumentException("retained must be positive: " + retained);
        }
        this.discardExecutor = discardExecutor;
        this.retained = retained;
    }

    /**
     * Drops one change set's reference once no checkpoint up to {@code lastCheckpointId} can be
     * retained any more (see the class comment); at once if that is already the case. Ignored for a
     * handed-over file.
     */
    public void releaseWhenSubsumed(StreamStateHandle file, long lastCheckpointId, Object owner) {
        keepInDoubt(file, lastCheckpointId, owner, false);
    }

    /**
     * As {@link #releaseWhenSubsumed}, for a change set that only the aborted checkpoint {@code
     * checkpointId} used (see the class comment).
     */
    public void releaseWhenResetSubsumed(StreamStateHandle file, long checkpointId, Object owner) {
        keepInDoubt(file, checkpointId, owner, true);
    }

    private void keepInDoubt(
            StreamStateHandle file, long lastCheckpointId, Object owner, boolean reset) {
        synchronized (this) {
            if (!refCounts.containsKey(file)) {
                return;
            }
            if (!isSubsumed(lastCheckpointId)) {
                inDoubt.add(new Doubtful(file, lastCheckpointId, owner, reset));
                LOG.debug(
                        "DSTL file {} in doubt until checkpoint {} is subsumed",
                        file,
                        lastCheckpointId);
                return;
            }
        }
        release(file);
    }

    /**
     * A closing writer gives up one change set's reference that a persist result of checkpoint
     * {@code lastCheckpointId} contained: released if that checkpoint can no longer be retained,
     * else the file is {@link #handOver handed over} (the task may restore from it). Returns
     * whether it was handed over.
     */
    public boolean handOverUnlessSubsumed(StreamStateHandle file, long lastCheckpointId) {
        synchronized (this) {
            if (!isSubsumed(lastCheckpointId)) {
                handOver(file);
                return true;
            }
        }
        release(file);
        return false;
    }

    /**
     * A closing writer hands over every file on which it still has a reference in doubt (see the
     * class comment); returns how many.
     */
    public int handOverInDoubt(Object owner) {
        List<StreamStateHandle> toRelease = new ArrayList<>();
        int handedOver;
        synchronized (this) {
            long newestReset = Long.MIN_VALUE;
            for (Doubtful entry : inDoubt) {
                if (entry.owner == owner && entry.reset) {
                    newestReset = Math.max(newestReset, entry.lastCheckpointId);
                }
            }
            Set<StreamStateHandle> files = new HashSet<>();
            Iterator<Doubtful> it = inDoubt.iterator();
            while (it.hasNext()) {
                Doubtful entry = it.next();
                if (entry.owner != owner) {
                    continue;
                }
                if (entry.reset && entry.lastCheckpointId < newestReset) {
                    it.remove(); // an older aborted checkpoint: not one a JobManager restores
                    toRelease.add(entry.file);
                } else {
                    files.add(entry.file);
                }
            }
            files.forEach(this::handOver);
            handedOver = files.size();
        }
        toRelease.forEach(this::release); // a no-op for a file handed over above
        return handedOver;
    }

    /** Checkpoint {@code checkpointId} completed (a writer got its confirmation). */
    public void checkpointConfirmed(long checkpointId) {
        List<StreamStateHandle> toRelease = new ArrayList<>();
        synchronized (this) {
            latestConfirmed.add(checkpointId);
            while (latestConfirmed.size() > retained) {
                latestConfirmed.pollFirst();
            }
            Iterator<Doubtful> it = inDoubt.iterator();
            while (it.hasNext()) {
                Doubtful entry = it.next();
                if (isSubsumed(entry.lastCheckpointId)) {
                    it.remove();
                    toRelease.add(entry.file);
                }
            }
        }
        toRelease.forEach(this::release);
    }

    /** Number of change set references kept in doubt; for tests and the close log line. */
    public synchronized int referencesInDoubt() {
        return inDoubt.size();
    }

    /** The storage closes: references still in doubt are given up (their files are kept). */
    public void close() {
        int left;
        synchronized (this) {
            left = inDoubt.size();
            inDoubt.clear();
        }
        if (left > 0) {
            LOG.info(
                    "{} DSTL file reference(s) of checkpoints whose completion was never confirmed"
                            + " on this TaskManager are kept: the JobManager may still retain"
                            + " them",
                    left);
        }
    }

    @GuardedBy("this")
    private boolean isSubsumed(long checkpointId) {
        return latestConfirmed.size() >= retained && latestConfirmed.first() > checkpointId;
    }

    /** One change set's reference in doubt, made by {@code owner} (a writer). */
    private record Doubtful(
            StreamStateHandle file, long lastCheckpointId, Object owner, boolean reset) {}

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
        LOG.debug("DSTL file {} tracked with {} references", file, changeSets);
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
            LOG.debug("DSTL file {} released ({} references left)", file, count - 1);
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
        inDoubt.removeIf(entry -> entry.file.equals(file));
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
        for (Doubtful entry : inDoubt) {
            if (!refCounts.containsKey(entry.file) || isSubsumed(entry.lastCheckpointId)) {
                throw new IllegalStateException("Stale reference in doubt: " + entry);
            }
        }
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
