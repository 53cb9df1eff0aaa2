package io.github.flinkstate.disagg.engine.compaction;

/**
 * Decides, while the engine rewrites data (a compaction, or the flush of a memtable), whether the
 * newest value of a key is dropped. The engine's user supplies it through {@code
 * LsmOptions.compactionFilter}; the Flink backend drops state whose time-to-live has expired (one
 * rule per registered state, chosen by the state id inside the key).
 *
 * <p>What the engine guarantees to a filter:
 *
 * <ol>
 *   <li>It sees only the newest version of a key among the data being rewritten, only puts (never
 *       deletes), never an entry hidden by a prefix tombstone, and never a key outside the store's
 *       key groups (clipped restored data is not read).
 *   <li>A dropped entry disappears without resurrecting anything: when older versions of the key
 *       may exist in data not part of the rewrite (deeper levels, or files when a memtable is
 *       flushed), it is replaced by a point delete with the same sequence number, itself dropped
 *       once it reaches the bottom. A dropped entry therefore reads as absent, as if it had been
 *       deleted.
 *   <li>Only new files are affected. Files already written are immutable, so readers, iterators,
 *       read snapshots and checkpoints that pinned the old files keep seeing the entry.
 * </ol>
 *
 * <p>What a filter must do: decide from the bytes alone (the arrays are the engine's: never modify
 * or retain them), be deterministic enough that a dropped entry is acceptable to lose at any time,
 * and not throw (a filter exception fails the compaction or flush, which is then retried with the
 * same data). Drop only entries whose loss is invisible to the application, e.g. expired ones.
 *
 * <p>Thread safety: one instance per run ({@link Factory#newRun()}), used by one thread; the
 * factory is called concurrently by the flush and compaction threads and must be thread-safe.
 */
@FunctionalInterface
public interface CompactionFilter {

    /**
     * True to drop the entry.
     *
     * @param key the full engine key (key group first)
     * @param value the value of the put
     */
    boolean drop(byte[] key, byte[] value);

    /** Creates the filter of each compaction and flush. */
    @FunctionalInterface
    interface Factory {

        /** A factory that never filters. */
        Factory NONE = () -> null;

        /** Whether runs may filter anything now. */
        default boolean active() {
            return this != NONE;
        }

        /**
         * The age after which a file is rewritten for this filter's sake when there is nothing else
         * to do (read at every pick), given the store's configured one ({@code
         * LsmOptions.periodicCompactionMillis}); 0 = none. Default: the configured one while {@link
         * #active()}, else 0.
         */
        default long periodicCompactionMillis(long configured) {
            return active() ? configured : 0;
        }

        /**
         * The filter for one run (a compaction or the flush of one memtable), e.g. with the current
         * time fixed for the run; null when this run filters nothing.
         */
        CompactionFilter newRun();
    }
}
