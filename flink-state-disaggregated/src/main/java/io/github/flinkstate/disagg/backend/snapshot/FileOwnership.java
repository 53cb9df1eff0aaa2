package io.github.flinkstate.disagg.backend.snapshot;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.annotation.concurrent.ThreadSafe;

/**
 * Who may delete each engine file (docs/disaggregated.md, "File ownership"):
 *
 * <ol>
 *   <li>A file the store wrote belongs to the store until a snapshot handle that names it is
 *       produced ("handed over"): from then on the JobManager may register it, and only Flink's
 *       {@code SharedStateRegistry} deletes it. The store never deletes a handed-over file.
 *   <li>If Flink discards a produced handle on the TaskManager without sending it to the JobManager
 *       (the checkpoint failed locally), the snapshot's files go back to the store unless another
 *       live handle names them; the discarded handle never deletes a file the store still reads
 *       ({@link GuardedSnapshotFuture}).
 *   <li>Restored files were written by an earlier incarnation; the store never deletes them.
 * </ol>
 *
 * <p>Exactly one party deletes a file that goes back to the store: if the store had already dropped
 * it from its live version ({@link #obsolete}) while it was handed over, {@link #discarded} returns
 * it for deletion; otherwise the store deletes it when it drops it later. Both decisions are taken
 * under this object's lock, so a compaction racing with a discard cannot make both delete it.
 *
 * <p>A handle discarded on the TaskManager never reached the JobManager, also when the discard
 * comes after a later checkpoint completed, so its files go back to the store then too, for the
 * newest {@link #LATE_DISCARDS} checkpoints older than the last completed one that neither
 * completed nor were discarded.
 *
 * <p>Memory: a file is forgotten once it is obsolete and Flink owns it (a completed checkpoint
 * named it, or every checkpoint that named it is older than a completed one and no longer awaited
 * for a late discard, so it was registered or given back already). For a confirmed file only its
 * name is held, however many later checkpoints name it; per checkpoint, the names of its files are
 * held until it completes, is discarded, or leaves the late-discard window.
 *
 * <p>Thread safety: thread-safe (the task thread, Flink's async snapshot threads and the engine's
 * background threads call it).
 */
@ThreadSafe
public final class FileOwnership {

    /**
     * Older checkpoints whose handles' fate is unknown (acknowledged and registered, or discarded
     * on this TaskManager after a later checkpoint completed) that are remembered for a late
     * discard, newest first; a discard of an older one gives nothing back (a leak, not a loss).
     */
    static final int LATE_DISCARDS = 16;

    /** Checkpoints whose produced handle names the file, per file path. */
    private final Map<String, Set<Long>> handedOverIn = new HashMap<>();

    /** Files named by a handle of a checkpoint that completed. */
    private final Set<String> confirmed = new HashSet<>();

    private final Map<Long, Set<String>> filesOfCheckpoint = new HashMap<>();

    /** Handed-over files that left the store's live version before their handles' fate is known. */
    private final Set<String> obsoleteWhileHandedOver = new HashSet<>();

    public synchronized void handedOver(long checkpointId, Set<String> files) {
        filesOfCheckpoint.computeIfAbsent(checkpointId, k -> new HashSet<>()).addAll(files);
        for (String f : files) {
            if (!confirmed.contains(f)) { // Flink owns a confirmed file whoever names it later
                handedOverIn.computeIfAbsent(f, k -> new HashSet<>()).add(checkpointId);
            }
        }
    }

    /**
     * A produced handle was discarded on the TaskManager (never registered): the files that belong
     * to the store again go back to it; returns those among them that the store no longer uses,
     * which the caller must delete now.
     */
    public synchronized Set<String> discarded(long checkpointId) {
        Set<String> delete = new HashSet<>();
        Set<String> files = filesOfCheckpoint.remove(checkpointId);
        if (files == null) {
            return delete;
        }
        for (String f : files) {
            Set<Long> in = handedOverIn.get(f);
            if (in != null) {
                in.remove(checkpointId);
                if (in.isEmpty() && !confirmed.contains(f)) {
                    handedOverIn.remove(f);
                    if (obsoleteWhileHandedOver.remove(f)) {
                        delete.add(f);
                    }
                }
            }
        }
        return delete;
    }

    public synchronized void completed(long checkpointId) {
        Set<String> files = filesOfCheckpoint.remove(checkpointId);
        if (files != null) {
            confirmed.addAll(files);
            // which checkpoints name a confirmed file no longer matters (see handedOver)
            handedOverIn.keySet().removeAll(files);
        }
        // an older handle was registered (a late acknowledgement) or is discarded here, maybe
        // only now: a snapshot cancelled after its upload began can produce it after this
        // completion; the newest LATE_DISCARDS of them are kept for that discard
        keepNewestUnsettled(checkpointId - 1);
        obsoleteWhileHandedOver.removeIf(
                f -> {
                    Set<Long> in = handedOverIn.get(f);
                    boolean settled =
                            confirmed.contains(f)
                                    || in == null
                                    || in.stream()
                                            .allMatch(
                                                    id ->
                                                            id <= checkpointId
                                                                    && !filesOfCheckpoint
                                                                            .containsKey(id));
                    if (settled) {
                        forget(f);
                    }
                    return settled;
                });
    }

    /**
     * The JobManager aborted a checkpoint. Its handle, if it reached the JobManager, was registered
     * there (Flink registers on acknowledgement); otherwise it is discarded on this TaskManager,
     * maybe later. Like a completion, an abort keeps only the newest {@link #LATE_DISCARDS}
     * unsettled checkpoints up to it, so that a job whose checkpoints keep being aborted holds a
     * bounded number of them.
     */
    public synchronized void aborted(long checkpointId) {
        keepNewestUnsettled(checkpointId);
    }

    /**
     * Keeps the newest {@link #LATE_DISCARDS} unsettled checkpoints up to {@code upTo}, and settles
     * the older ones: their handles were registered, or their discard comes too late to give
     * anything back (a leak, never a loss). A file that only settled checkpoints name is Flink's:
     * confirmed if the store still uses it, forgotten if it does not.
     */
    private void keepNewestUnsettled(long upTo) {
        List<Long> older = new ArrayList<>();
        for (long id : filesOfCheckpoint.keySet()) {
            if (id <= upTo) {
                older.add(id);
            }
        }
        Collections.sort(older);
        for (int i = 0; i < older.size() - LATE_DISCARDS; i++) {
            long id = older.get(i);
            for (String f : filesOfCheckpoint.remove(id)) {
                Set<Long> in = handedOverIn.get(f);
                if (in == null || !in.remove(id) || !in.isEmpty()) {
                    continue;
                }
                handedOverIn.remove(f);
                if (!obsoleteWhileHandedOver.remove(f)) {
                    confirmed.add(f); // still live; obsolete() forgets it when the store drops it
                }
            }
        }
    }

    /**
     * The store dropped {@code path} from its live version (a compaction replaced it, or a full
     * checkpoint rehomed it): returns true when the store must delete it now, false when Flink owns
     * it or may still give it back ({@link #discarded}).
     */
    public synchronized boolean obsolete(String path) {
        if (confirmed.contains(path)) {
            forget(path); // Flink's registry deletes it; the store never asks about it again
            return false;
        }
        if (handedOverIn.containsKey(path)) {
            obsoleteWhileHandedOver.add(path);
            return false;
        }
        return true;
    }

    /** True when Flink may own the file: the store must not delete it. */
    public synchronized boolean isHandedOver(String path) {
        return handedOverIn.containsKey(path) || confirmed.contains(path);
    }

    /** How many checkpoint ids this object holds for files, for tests of its memory. */
    synchronized int checkpointIdsHeld() {
        int n = 0;
        for (Set<Long> in : handedOverIn.values()) {
            n += in.size();
        }
        return n;
    }

    /** How many file names this object holds, for tests of its memory. */
    synchronized int filesHeld() {
        Set<String> names = new HashSet<>(confirmed);
        names.addAll(handedOverIn.keySet());
        names.addAll(obsoleteWhileHandedOver);
        filesOfCheckpoint.values().forEach(names::addAll);
        return names.size();
    }

    /**
     * Drops every mention of {@code path}: its ownership is settled and the store no longer uses
     * it, so no checkpoint's fate (a pending one naming it may still complete) can change it.
     */
    private void forget(String path) {
        confirmed.remove(path);
        handedOverIn.remove(path);
        for (Set<String> files : filesOfCheckpoint.values()) {
            files.remove(path);
        }
    }
}
