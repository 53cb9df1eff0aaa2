package io.github.flinkstate.disagg.backend.metrics;

import io.github.flinkstate.disagg.engine.LsmStats;
import io.github.flinkstate.disagg.engine.LsmStore;
import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.disagg.engine.cache.DiskCache;
import io.github.flinkstate.disagg.engine.cache.RowCache;
import io.github.flinkstate.disagg.engine.memtable.WriteBufferBudget;
import io.github.flinkstate.disagg.engine.sst.ReadCounters;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;

/**
 * The disaggregated keyed backend's metrics, as gauges in the group {@value #GROUP} under the
 * operator's metric group (one set per keyed backend, i.e. per operator subtask). Every gauge reads
 * a counter the engine or the snapshot keeps anyway; registering costs nothing on the state access
 * path (reading the row cache's gauges takes its lock for a moment). The names and meanings are
 * listed in {@code docs/operations.md}.
 *
 * <p>Thread safety: gauges may be read from any thread (the counters are atomic or read under their
 * owner's lock).
 */
public final class DisaggMetrics {

    public static final String GROUP = "disaggregated";

    private DisaggMetrics() {}

    /**
     * Registers the gauges of one keyed backend.
     *
     * @param restoreNanos how long the restore took (0 for a fresh start)
     * @param inheritedFilesToCopy restored files of another job the background copy has still to
     *     copy
     */
    public static void register(
            MetricGroup parent,
            LsmStore store,
            CheckpointFigures lastCheckpoint,
            long restoreNanos,
            IntSupplier inheritedFilesToCopy) {
        MetricGroup g = parent.addGroup(GROUP);
        BlockCache cache = store.blockCache();
        ReadCounters primary = store.primaryReads();
        LsmStats stats = store.stats();
        g.gauge("blockCacheHitRatio", (Gauge<Double>) () -> hitRatio(cache));
        g.gauge("blockCacheHits", (Gauge<Long>) cache::hitCount);
        g.gauge("blockCacheRequests", (Gauge<Long>) cache::requestCount);
        g.gauge("primaryReads", (Gauge<Long>) primary::reads);
        g.gauge("blockCacheUsedBytes", (Gauge<Long>) cache::weightedSize);
        g.gauge("blockCacheSlotUsedBytes", (Gauge<Long>) () -> cache.memory().usedBytes());
        g.gauge("blockCacheSlotCapacityBytes", (Gauge<Long>) cache::capacityBytes);
        g.gauge("fileMetadataBytes", (Gauge<Long>) cache::pinnedMetadataBytes);
        g.gauge("fileMetadataSlotBytes", (Gauge<Long>) () -> cache.memory().pinnedBytes());
        RowCache rows = store.rowCache(); // null when off: its gauges stay at 0
        g.gauge("rowCacheHits", (Gauge<Long>) () -> rows == null ? 0 : rows.hitCount());
        g.gauge("rowCacheRequests", (Gauge<Long>) () -> rows == null ? 0 : rows.requestCount());
        g.gauge("rowCacheRows", (Gauge<Integer>) () -> rows == null ? 0 : rows.size());
        g.gauge("rowCacheBytes", (Gauge<Long>) () -> rows == null ? 0 : rows.chargedBytes());
        g.gauge("rowCacheSlotBytes", (Gauge<Long>) () -> cache.memory().rowBytes());
        g.gauge("rowCacheBytesYielded", (Gauge<Long>) () -> rows == null ? 0 : rows.bytesYielded());
        g.gauge("memtableBytes", (Gauge<Long>) store::chargedMemtableBytes);
        WriteBufferBudget writeBuffers = store.writeBufferBudget();
        if (writeBuffers != null) {
            g.gauge("memtableSlotBytes", (Gauge<Long>) writeBuffers::usedBytes);
            g.gauge("memtableSlotLimitBytes", (Gauge<Long>) writeBuffers::limitBytes);
        }
        DiskCache disk = cache.disk();
        if (disk != null) {
            g.gauge("localCacheHits", (Gauge<Long>) disk::hitCount);
            g.gauge("localCacheMisses", (Gauge<Long>) disk::missCount);
            g.gauge("localCacheUsedBytes", (Gauge<Long>) disk::usedBytes);
            g.gauge("localCacheWholeFiles", (Gauge<Integer>) disk::wholeFileCount);
            g.gauge("localCacheMappedFiles", (Gauge<Integer>) disk::mappedWholeFileCount);
            g.gauge("localCacheBytesWritten", (Gauge<Long>) disk::bytesWritten);
            g.gauge("localCacheEvictions", (Gauge<Long>) disk::evictionCount);
            g.gauge("localCacheBlocksKept", (Gauge<Long>) disk::blocksKeptCount);
            g.gauge("localCacheInvalidations", (Gauge<Long>) disk::invalidationCount);
            g.gauge("localCacheWriteFailures", (Gauge<Long>) disk::writeFailureCount);
            g.gauge(
                    "localCacheWarmUpBytes",
                    (Gauge<Long>) () -> store.warmUp() == null ? 0 : store.warmUp().bytesDone());
            g.gauge(
                    "localCacheWarmUpPlannedBytes",
                    (Gauge<Long>) () -> store.warmUp() == null ? 0 : store.warmUp().bytesPlanned());
            g.gauge(
                    "warmUpMemoryBytes",
                    (Gauge<Long>)
                            () -> store.warmUp() == null ? 0 : store.warmUp().memoryBytesDone());
        }
        g.gauge("primaryBytesRead", (Gauge<Long>) primary::bytes);
        g.gauge("flushes", (Gauge<Long>) stats::flushes);
        g.gauge("flushBytes", (Gauge<Long>) stats::flushBytes);
        g.gauge("flushTimeMs", (Gauge<Long>) () -> millis(stats.flushNanos()));
        g.gauge("lastFlushDurationMs", (Gauge<Long>) () -> millis(stats.lastFlushNanos()));
        g.gauge("compactions", (Gauge<Long>) stats::compactions);
        g.gauge("compactionBytesWritten", (Gauge<Long>) stats::compactionBytesWritten);
        g.gauge("compactionTimeMs", (Gauge<Long>) () -> millis(stats.compactionNanos()));
        g.gauge(
                "lastCompactionDurationMs",
                (Gauge<Long>) () -> millis(stats.lastCompactionNanos()));
        g.gauge("writeAmplification", (Gauge<Double>) stats::writeAmplification);
        g.gauge("ttlEntriesDropped", (Gauge<Long>) stats::entriesFiltered);
        g.gauge("prefixTombstones", (Gauge<Long>) store::storedPrefixTombstones);
        g.gauge("level0Stalls", (Gauge<Long>) stats::level0Stalls);
        g.gauge("level0StallTimeMs", (Gauge<Long>) () -> millis(stats.level0StallNanos()));
        long restoreMillis = millis(restoreNanos);
        g.gauge("restoreDurationMs", (Gauge<Long>) () -> restoreMillis);
        g.gauge("lastCheckpointFiles", (Gauge<Long>) lastCheckpoint::files);
        g.gauge("lastCheckpointBytes", (Gauge<Long>) lastCheckpoint::bytes);
        g.gauge("lastCheckpointNewBytes", (Gauge<Long>) lastCheckpoint::newBytes);
        g.gauge("inheritedFilesToCopy", (Gauge<Integer>) inheritedFilesToCopy::getAsInt);
    }

    /** Hits / requests since the start; 0 before the first request. */
    static double hitRatio(BlockCache cache) {
        long requests = cache.requestCount();
        return requests == 0 ? 0.0 : (double) cache.hitCount() / requests;
    }

    private static long millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }
}
