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
    final AtomicLong compactions = new AtomicLong();
    final AtomicLong trivialMoves = new AtomicLong();
    final AtomicLong compactionBytesRead = new AtomicLong();
    final AtomicLong compactionBytesWritten = new AtomicLong();
    final AtomicLong filesDeleted = new AtomicLong();
    final AtomicLong userBytesWritten = new AtomicLong();
    final AtomicLong filesRehomed = new AtomicLong();

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
                + "}";
    }
}
