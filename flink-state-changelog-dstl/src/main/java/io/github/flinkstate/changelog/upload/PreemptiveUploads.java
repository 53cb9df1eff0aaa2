package io.github.flinkstate.changelog.upload;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import javax.annotation.concurrent.GuardedBy;
import javax.annotation.concurrent.ThreadSafe;
import org.apache.flink.runtime.io.AvailabilityProvider;

/**
 * Decides pre-emptive uploads (ahead of a checkpoint) for all writers of one job on one TaskManager
 * together, so that they share files: when the bytes that the writers hold and have not uploaded
 * reach {@code thresholdPerWriter} times the number of open writers that hold any (at least one),
 * every writer's not-yet-uploaded change sets are handed to the {@link BatchingUploadScheduler}
 * together and go out as one file. Deciding per writer instead (each writer at its own threshold,
 * as Flink's DSTL does) bounds the same bytes per TaskManager but cuts a file each time any one
 * writer crosses its threshold, at moments the other writers do not share.
 *
 * <p>Bound: between uploads the open writers together hold less than {@code thresholdPerWriter x
 * writers holding bytes} (plus up to one {@link #PUBLISH_GRANULE_DIVISOR}-th of the threshold per
 * writer not yet published), never more than with per-writer thresholds; a checkpoint therefore
 * never has more to upload than before. Writers that hold nothing do not count: an idle writer, and
 * a writer Flink left open after a failed changelog restore (never written to, never closed), would
 * otherwise raise every other writer's threshold for as long as the job runs.
 *
 * <p>Pre-emptive uploads are held back while the storage is back-pressured (its {@link
 * AvailabilityProvider} is unavailable), as before, and after a failed upload: for {@link
 * #FIRST_PAUSE_NANOS}, doubling with each pause that ends in another failure up to {@link
 * #MAX_PAUSE_NANOS}; a successful upload ends the pause. A failed batch puts its bytes back among
 * the not-uploaded ones, still above the threshold, so without the pause every failure started the
 * next round at once: several rounds a second, each with its attempts and warnings, for as long as
 * the file system was down. Checkpoints' own uploads are not held back.
 *
 * <p>Thread safety: thread-safe. Lock order: a writer's lock, then this object's; this object never
 * calls a writer while holding its own lock ({@link #uploadAll} runs without it).
 */
@ThreadSafe
public final class PreemptiveUploads {

    /** The pause of pre-emptive rounds after a first failed upload. */
    static final long FIRST_PAUSE_NANOS = 1_000_000_000L;

    /** The longest pause of pre-emptive rounds after failed uploads. */
    static final long MAX_PAUSE_NANOS = 30_000_000_000L;

    /** A writer publishes its growth after this fraction of the threshold, not per change. */
    static final int PUBLISH_GRANULE_DIVISOR = 16;

    private final long thresholdPerWriter;
    private final AvailabilityProvider availability;

    /** Not-yet-uploaded bytes of each open writer, as last published. */
    @GuardedBy("this")
    private final Map<DfsChangelogWriter, Long> published = new IdentityHashMap<>();

    @GuardedBy("this")
    private long total;

    /** Writers whose published bytes are above zero. */
    @GuardedBy("this")
    private int holding;

    /** A thread is collecting the writers' uploads; no second collection starts meanwhile. */
    @GuardedBy("this")
    private boolean collecting;

    @GuardedBy("this")
    private long rounds;

    /** Failed uploads since the last successful one. */
    @GuardedBy("this")
    private int failuresInARow;

    /** No pre-emptive round starts before this {@code System.nanoTime()}. */
    @GuardedBy("this")
    private long pausedUntil = System.nanoTime();

    public PreemptiveUploads(long thresholdPerWriter, AvailabilityProvider availability) {
        this.thresholdPerWriter = thresholdPerWriter;
        this.availability = availability;
    }

    /**
     * The open writers, a copy (the batching scheduler waits for them at a checkpoint, see {@link
     * CheckpointRequests}).
     */
    public synchronized List<DfsChangelogWriter> openWriters() {
        return new ArrayList<>(published.keySet());
    }

    /** The growth after which a writer publishes its bytes again (at least one byte). */
    long publishGranule() {
        return Math.max(1, thresholdPerWriter / PUBLISH_GRANULE_DIVISOR);
    }

    /** Counts a new open writer in (its bytes start at zero). */
    public synchronized void register(DfsChangelogWriter writer) {
        published.put(writer, 0L);
    }

    synchronized void unregister(DfsChangelogWriter writer) {
        Long last = published.remove(writer);
        if (last != null) {
            total -= last;
            if (last > 0) {
                holding--;
            }
        }
    }

    /**
     * Records a writer's not-yet-uploaded bytes; returns true when the caller must now run {@link
     * #uploadAll} (outside its writer's lock).
     */
    synchronized boolean publish(DfsChangelogWriter writer, long notUploadedBytes) {
        Long last = published.replace(writer, notUploadedBytes);
        if (last == null) {
            return false; // closed
        }
        total += notUploadedBytes - last;
        if (last == 0 && notUploadedBytes > 0) {
            holding++;
        } else if (last > 0 && notUploadedBytes == 0) {
            holding--;
        }
        if (!collecting
                && total >= thresholdPerWriter * Math.max(1, holding)
                && System.nanoTime() - pausedUntil >= 0
                && availability.isAvailable()) {
            collecting = true;
            return true;
        }
        return false;
    }

    /**
     * Starts the pre-emptive upload of every open writer; returns their tasks, which the caller
     * hands to the scheduler together (one batch).
     */
    List<UploadTask> uploadAll() {
        List<DfsChangelogWriter> writers;
        synchronized (this) {
            writers = new ArrayList<>(published.keySet());
        }
        List<UploadTask> tasks = new ArrayList<>();
        try {
            for (DfsChangelogWriter writer : writers) {
                UploadTask task = writer.startPreemptiveUpload();
                if (task != null) {
                    tasks.add(task);
                }
            }
        } finally {
            synchronized (this) {
                collecting = false;
                rounds++;
            }
        }
        return tasks;
    }

    /**
     * An upload failed: pre-emptive rounds pause, longer after each pause that ended in another
     * failure. Failures during a pause do not lengthen it: one failed batch reports once per writer
     * it carried.
     */
    synchronized void uploadFailed() {
        long now = System.nanoTime();
        if (now - pausedUntil < 0) {
            return;
        }
        failuresInARow++;
        long pause = FIRST_PAUSE_NANOS << Math.min(failuresInARow - 1, 8);
        pausedUntil = now + Math.min(pause, MAX_PAUSE_NANOS);
    }

    /** An upload succeeded: a pause ends, and the next failure pauses for the first pause. */
    synchronized void uploadSucceeded() {
        failuresInARow = 0;
        pausedUntil = System.nanoTime();
    }

    /** For tests: how long pre-emptive rounds still pause, in nanoseconds (0 if not paused). */
    synchronized long pauseLeftNanos() {
        return Math.max(0, pausedUntil - System.nanoTime());
    }

    /** How many times all writers were uploaded together; for tests and logs. */
    public synchronized long rounds() {
        return rounds;
    }

    /** The sum of the published not-yet-uploaded bytes; for tests. */
    public synchronized long publishedBytes() {
        return total;
    }
}
