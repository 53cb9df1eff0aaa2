package io.github.flinkstate.disagg.engine;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Byte and event counters of one store (for metrics and write-amplification measurements).
 *
 * <p>Thread safety: thread-safe (atomic counters).
 */
public final class LsmStats {
    final AtomicLong flushes = new AtomicLong();
    final AtomicLong flushBytes = new AtomicLong();
    final AtomicLong flushFailures = new AtomicLong();
    final AtomicLong compactionFailures = new AtomicLong();
    final AtomicLong compactions = new AtomicLong();
    final AtomicLong trivialMoves = new AtomicLong();
    final AtomicLong compactionBytesRead = new AtomicLong();
    final AtomicLong compactionBytesWritten = new AtomicLong();
    final AtomicLong filesDeleted = new AtomicLong();
    final AtomicLong userBytesWritten = new AtomicLong();
    final AtomicLong filesRehomed = new AtomicLong();
    final AtomicLong entriesFiltered = new AtomicLong();
    private final AtomicLong flushNanos = new AtomicLong();
    private final AtomicLong lastFlushNanos = new AtomicLong();
    private final AtomicLong compactionNanos = new AtomicLong();
    private final AtomicLong lastCompactionNanos = new AtomicLong();
    private final AtomicLong level0Stalls = new AtomicLong();
    private final AtomicLong level0StallNanos = new AtomicLong();

    void recordFlush(long nanos) {
        flushNanos.addAndGet(nanos);
        lastFlushNanos.set(nanos);
    }

    void recordLevel0Stall(long nanos) {
        level0Stalls.incrementAndGet();
        level0StallNanos.addAndGet(nanos);
    }

    /** Writes that waited for compaction to bring the level-0 files below the stop trigger. */
    public long level0Stalls() {
        return level0Stalls.get();
    }

    /** Time writes spent waiting for level-0 compaction, summed. */
    public long level0StallNanos() {
        return level0StallNanos.get();
    }

    void recordCompaction(long nanos) {
        compactionNanos.addAndGet(nanos);
        lastCompactionNanos.set(nanos);
    }

    /** Time spent writing memtables to files, summed over all flushes. */
    public long flushNanos() {
        return flushNanos.get();
    }

    /** Duration of the latest successful flush (0 before the first). */
    public long lastFlushNanos() {
        return lastFlushNanos.get();
    }

    /** Time spent in compactions that rewrote data (trivial moves excluded), summed. */
    public long compactionNanos() {
        return compactionNanos.get();
    }

    /** Duration of the latest compaction that rewrote data (0 before the first). */
    public long lastCompactionNanos() {
        return lastCompactionNanos.get();
    }

    /**
     * Entries a {@code CompactionFilter} dropped in flushes and compactions (each counted once per
     * rewrite that dropped it; one replaced by a point delete counts when the delete is written).
     */
    public long entriesFiltered() {
        return entriesFiltered.get();
    }

    /** Restored files copied into this store's directory by {@code LsmStore.rehome}. */
    public long filesRehomed() {
        return filesRehomed.get();
    }

    public long flushes() {
        return flushes.get();
    }

    public long flushBytes() {
        return flushBytes.get();
    }

    public long flushFailures() {
        return flushFailures.get();
    }

    /** Background compactions that failed (each is retried when more work is scheduled). */
    public long compactionFailures() {
        return compactionFailures.get();
    }

    public long compactions() {
        return compactions.get();
    }

    public long trivialMoves() {
        return trivialMoves.get();
    }

    public long compactionBytesRead() {
        return compactionBytesRead.get();
    }

    public long compactionBytesWritten() {
        return compactionBytesWritten.get();
    }

    public long filesDeleted() {
        return filesDeleted.get();
    }

    /** Key plus value bytes accepted by put. */
    public long userBytesWritten() {
        return userBytesWritten.get();
    }

    /** (flush + compaction bytes written) / flush bytes; 1.0 when nothing was flushed. */
    public double writeAmplification() {
        long f = flushBytes.get();
        return f == 0 ? 1.0 : (double) (f + compactionBytesWritten.get()) / f;
    }

    @Override
    public String toString() {
        return "LsmStats{flushes="
                + flushes
                + ", flushBytes="
                + flushBytes
                + ", compactions="
                + compactions
                + ", trivialMoves="
                + trivialMoves
                + ", compactionRead="
                + compactionBytesRead
                + ", compactionWritten="
                + compactionBytesWritten
                + ", filesDeleted="
                + filesDeleted
                + ", userBytes="
                + userBytesWritten
                + ", entriesFiltered="
                + entriesFiltered
                + "}";
    }
}
