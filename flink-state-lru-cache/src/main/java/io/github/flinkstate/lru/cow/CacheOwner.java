package io.github.flinkstate.lru.cow;

/**
 * The state that owns a group of {@link CacheEntry entries}: it knows how to write a dirty entry
 * back to the delegate backend when the {@link CowLruMap} evicts it, and is told when one of its
 * entries leaves the cache.
 *
 * <p>Called only on the task thread, from inside map operations.
 */
public interface CacheOwner {

    /** Writes a dirty entry (value or deletion) to the delegate backend under the entry's key. */
    void writeBack(CacheEntry entry) throws Exception;

    /**
     * Called when a new entry of this owner became live, before the insert evicts anything: the
     * entry stays live even if an eviction's write-back then fails the insert.
     */
    default void onInserted(CacheEntry entry) {}

    /** Called after an entry of this owner was removed from the live map (evicted or dropped). */
    default void onRemoved(CacheEntry entry) {}

    /**
     * Called when the dirty flag of one of this owner's live entries changes: {@code true} when it
     * became dirty (including an insert of a dirty entry), {@code false} when it became clean. A
     * dirty entry that is removed is reported through {@link #onRemoved} only.
     */
    default void onDirtyChanged(CacheEntry entry, boolean dirty) {}
}
