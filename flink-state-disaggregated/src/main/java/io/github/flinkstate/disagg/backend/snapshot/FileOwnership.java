package io.github.flinkstate.disagg.backend.snapshot;

import java.util.HashMap;
import java.util.HashSet;
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
 * <p>Thread safety: thread-safe (the task thread, Flink's async snapshot threads and the engine's
 * background threads call it).
 */
@ThreadSafe
public final class FileOwnership {

    /** Checkpoints whose produced handle names the file, per file path. */
    private final Map<String, Set<Long>> handedOverIn = new HashMap<>();

    /** Files named by a handle of a checkpoint that completed. */
    private final Set<String> confirmed = new HashSet<>();

    private final Map<Long, Set<String>> filesOfCheckpoint = new HashMap<>();

    public synchronized void handedOver(long checkpointId, Set<String> files) {
        filesOfCheckpoint.computeIfAbsent(checkpointId, k -> new HashSet<>()).addAll(files);
        for (String f : files) {
            handedOverIn.computeIfAbsent(f, k -> new HashSet<>()).add(checkpointId);
        }
    }

    /**
     * A produced handle was discarded on the TaskManager (never registered): returns the files that
     * belong to the store again.
     */
    public synchronized Set<String> discarded(long checkpointId) {
        Set<String> back = new HashSet<>();
        Set<String> files = filesOfCheckpoint.remove(checkpointId);
        if (files == null) {
            return back;
        }
        for (String f : files) {
            Set<Long> in = handedOverIn.get(f);
            if (in != null) {
                in.remove(checkpointId);
                if (in.isEmpty() && !confirmed.contains(f)) {
                    handedOverIn.remove(f);
                    back.add(f);
                }
            }
        }
        return back;
    }

    public synchronized void completed(long checkpointId) {
        Set<String> files = filesOfCheckpoint.get(checkpointId);
        if (files != null) {
            confirmed.addAll(files);
        }
        // older handles are registered or gone; a late discard of one leaves files handed over
        filesOfCheckpoint.keySet().removeIf(id -> id <= checkpointId);
    }

    /** True when Flink may own the file: the store must not delete it. */
    public synchronized boolean isHandedOver(String path) {
        return handedOverIn.containsKey(path) || confirmed.contains(path);
    }
}
