package io.github.flinkstate.lru.cow;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;
import java.util.function.Predicate;
import org.apache.flink.api.common.typeutils.TypeSerializer;

/**
 * A bounded hash map of {@link CacheEntry entries} with least-recently-used eviction and
 * copy-on-write snapshots, the object cache behind the LRU cache backend.
 *
 * <p>Structure: a chained hash table (power-of-two bucket array) for lookups plus a doubly linked,
 * circular LRU list through all live entries (head = most recently used). Snapshots capture the
 * bucket array only: {@link #snapshot()} bumps the map version and shallow-copies the array, which
 * is O(number of buckets) (into the array of a released snapshot when one is spare: one extra array
 * of the table's size stays allocated). From then on, a write to an entry that the snapshot can
 * reach first copies that entry and the chain in front of it (path copy), so the snapshot keeps
 * seeing the entries, values and chains as they were; each entry is copied at most once per
 * snapshot, because the copy carries the new version. The LRU list is not part of what snapshots
 * read, so recency can be updated on any entry without copying.
 *
 * <p>Recency with second chance (CLOCK): the LRU list is ordered by the time each entry was last
 * linked at the front (insert or promotion); every link advances a tick and stamps the entry with
 * it, so the stamps decrease strictly from head to tail. A hit does not relink: it only sets the
 * entry's {@code referenced} flag, a write into the entry the lookup has just read (relinking would
 * write two neighbouring entries, i.e. two more random memory accesses and reference stores per
 * hit). Eviction looks at the tail: an entry used since it was linked loses its flag and is linked
 * at the front (its second chance); the first tail entry without the flag is the victim. So the
 * victim is always the least recently linked entry that was not used since it was linked, and an
 * entry used since it was last linked is never evicted before every unused entry behind it; the
 * cost of promotion is paid once per eviction pass over a used entry, not once per hit, and a cache
 * that holds its working set (no evictions) never relinks.
 *
 * <p>Thread safety: one writer (the task thread) performs every operation except {@link
 * #release(int)}, which a snapshot's thread calls when it is done, and the reads of a {@link
 * CowSnapshot}. Only the snapshot-version bookkeeping is synchronized.
 *
 * <p>Invariants (checked by {@link #checkInvariants()}):
 *
 * <ol>
 *   <li>{@code size} equals the number of entries reachable from the bucket array and the number of
 *       entries on the LRU list, and they are the same entries.
 *   <li>Every entry sits in the bucket its hash selects, and no two live entries have the same
 *       identity (owner, key, namespace, user key).
 *   <li>After any public operation returns normally, {@code size <= maxEntries}.
 *   <li>No frozen field of an entry with {@code entryVersion < highestRequiredSnapshotVersion} is
 *       written, and no value object with {@code valueVersion < highestRequiredSnapshotVersion} is
 *       handed out for mutation.
 *   <li>Stamps ({@code lruTick}) decrease strictly from the head to the tail of the LRU list and
 *       are at most {@code tick}; hence an entry stamped {@code t} has at most {@code tick - t}
 *       entries in front of it.
 * </ol>
 */
public final class CowLruMap {

    private static final int MIN_CAPACITY = 16;
    private static final int MAX_CAPACITY = 1 << 30;

    private final int maxEntries;

    /** Links at the front of the LRU list so far (inserts and promotions). */
    private long tick;

    private CacheEntry[] table;
    private int size;
    private int threshold;

    /** Version given to entries created or copied now. Only the writer changes it. */
    private int mapVersion;

    /** The newest version any running snapshot still reads; 0 when no snapshot runs. */
    private volatile int highestRequiredSnapshotVersion;

    /** Running snapshots: version -> the bucket array copy it reads. Guarded by itself. */
    private final TreeMap<Integer, CacheEntry[]> snapshotVersions = new TreeMap<>();

    /**
     * The cleared bucket array of a released snapshot, reused by the next snapshot of the same
     * table size so that the synchronous phase copies into memory it already has instead of
     * allocating (and zeroing) a new array, which for large tables is a humongous allocation.
     * Guarded by {@link #snapshotVersions}.
     */
    private CacheEntry[] spareBuckets;

    /** Sentinel of the circular LRU list: {@code lru.lruNext} is the most recently used. */
    private final CacheEntry lru =
            new CacheEntry(null, null, null, null, 0, 0, null, false, 0, null);

    private long evictions;
    private long copiesOnWrite;

    public CowLruMap(int maxEntries) {
        if (maxEntries <= 0) {
            throw new IllegalArgumentException("maxEntries must be positive: " + maxEntries);
        }
        this.maxEntries = maxEntries;
        this.table = new CacheEntry[MIN_CAPACITY];
        this.threshold = MIN_CAPACITY * 3 / 4;
        this.mapVersion = 0;
        lru.lruNext = lru;
        lru.lruPrev = lru;
    }

    // ------------------------------------------------------------------------------------------
    // lookups
    // ------------------------------------------------------------------------------------------

    /** Returns the live entry and marks it used (see the class comment), or null. */
    public CacheEntry get(CacheOwner owner, Object key, Object namespace, Object userKey) {
        CacheEntry e = peek(owner, key, namespace, userKey);
        if (e != null && !e.referenced) {
            e.referenced = true;
        }
        return e;
    }

    /** Returns the live entry without changing recency, or null. */
    public CacheEntry peek(CacheOwner owner, Object key, Object namespace, Object userKey) {
        int h = hash(owner, key, namespace, userKey);
        for (CacheEntry e = table[h & (table.length - 1)]; e != null; e = e.next) {
            if (e.matches(owner, key, namespace, userKey, h)) {
                return e;
            }
        }
        return null;
    }

    /**
     * Like {@link #peek}, for a thread other than the writer (queryable state): reads the bucket
     * array once, changes nothing. Not synchronized with the writer, so an entry being inserted,
     * copied or moved by a resize at that moment may be missed (the caller then asks the delegate,
     * which has every clean value); never loops, never throws because of a concurrent write.
     */
    public CacheEntry peekFromOtherThread(
            CacheOwner owner, Object key, Object namespace, Object userKey) {
        int h = hash(owner, key, namespace, userKey);
        CacheEntry[] buckets = table;
        for (CacheEntry e = buckets[h & (buckets.length - 1)]; e != null; e = e.next) {
            if (e.matches(owner, key, namespace, userKey, h)) {
                return e;
            }
        }
        return null;
    }

    /**
     * Returns the live entry with the identity of {@code maybeStale}, which may have been copied.
     */
    public CacheEntry findLive(CacheEntry maybeStale) {
        return peek(maybeStale.owner, maybeStale.key, maybeStale.namespace, maybeStale.userKey);
    }

    // ------------------------------------------------------------------------------------------
    // writes
    // ------------------------------------------------------------------------------------------

    /**
     * Inserts a new entry (REQUIRES: none with this identity is live) as most recently used, then
     * evicts least recently used entries until the bound holds again, writing dirty ones back
     * through their owner. Returns the new entry, which is never evicted by this call.
     */
    public CacheEntry insert(
            CacheOwner owner,
            Object key,
            Object namespace,
            Object userKey,
            int keyGroup,
            Object value,
            boolean dirty)
            throws Exception {
        int h = hash(owner, key, namespace, userKey);
        int idx = h & (table.length - 1);
        // A new head never needs a copy: the old head is not written, the snapshot has its own
        // array.
        CacheEntry e =
                new CacheEntry(
                        owner,
                        key,
                        namespace,
                        userKey,
                        h,
                        keyGroup,
                        value,
                        dirty,
                        mapVersion,
                        table[idx]);
        table[idx] = e;
        linkFront(e);
        size++;
        if (dirty) {
            owner.onDirtyChanged(e, true);
        }
        if (size > threshold && table.length < MAX_CAPACITY) {
            resize();
        }
        evictIfNeeded(e);
        return e;
    }

    /**
     * Returns an entry with the identity of {@code target} whose value and dirty flag may be
     * written: {@code target} itself if no snapshot can see it, else a copy (invariant 4). {@code
     * target} must be live; afterwards only the returned entry is.
     */
    public CacheEntry writable(CacheEntry target) {
        int required = highestRequiredSnapshotVersion;
        if (target.entryVersion >= required) {
            return target;
        }
        int idx = target.hash & (table.length - 1);
        CacheEntry prev = null;
        CacheEntry current = table[idx];
        while (current != target) {
            if (current == null) {
                throw new IllegalStateException("Entry is not live: " + target);
            }
            if (current.entryVersion < required) {
                current = replaceWithCopy(current, prev, idx);
            }
            prev = current;
            current = current.next;
        }
        return replaceWithCopy(target, prev, idx);
    }

    /** Sets value and dirty flag of a live entry (copying it if a snapshot sees it). */
    public CacheEntry setValue(CacheEntry target, Object value, boolean dirty) {
        CacheEntry e = writable(target);
        boolean wasDirty = e.dirty;
        if (e.value != value) {
            e.value = value; // a reference store into an old object costs a GC barrier
        }
        if (wasDirty != dirty) {
            e.dirty = dirty;
        }
        if (e.valueVersion != mapVersion) {
            e.valueVersion = mapVersion;
        }
        if (wasDirty != dirty) {
            e.owner.onDirtyChanged(e, dirty);
        }
        return e;
    }

    /**
     * Clears the dirty flag of a live entry after its value reached the delegate. An entry with a
     * {@link PartialValue} is removed instead (its value is not the delegate's whole value); then
     * null is returned.
     */
    public CacheEntry markClean(CacheEntry target) {
        if (target.value instanceof PartialValue) {
            remove(target);
            return null;
        }
        if (!target.dirty) {
            return target;
        }
        CacheEntry e = writable(target);
        e.dirty = false;
        e.owner.onDirtyChanged(e, false);
        return e;
    }

    /**
     * Returns a live entry whose value object the caller may mutate in place: if a snapshot may
     * read the current value object, the entry gets a deep copy made with {@code serializer} (a
     * {@link PartialValue} copies itself).
     */
    public CacheEntry privateValue(CacheEntry target, TypeSerializer<Object> serializer) {
        if (target.valueVersion >= highestRequiredSnapshotVersion
                || target.value == CacheEntry.ABSENT) {
            return target;
        }
        CacheEntry e = writable(target);
        e.value =
                e.value instanceof PartialValue partial
                        ? partial.copy(serializer)
                        : serializer.copy(e.value);
        e.valueVersion = mapVersion;
        return e;
    }

    /** Removes a live entry from the map and the LRU list; does not write it back. */
    public void remove(CacheEntry target) {
        int idx = target.hash & (table.length - 1);
        CacheEntry prev = null;
        CacheEntry current = table[idx];
        while (current != target) {
            if (current == null) {
                throw new IllegalStateException("Entry is not live: " + target);
            }
            prev = current;
            current = current.next;
        }
        if (prev == null) {
            table[idx] = target.next;
        } else {
            CacheEntry livePrev = writable(prev);
            livePrev.next = target.next;
        }
        unlink(target);
        size--;
        target.owner.onRemoved(target);
    }

    /** Live entries that match the filter, in no particular order (a copy of the references). */
    public List<CacheEntry> liveEntries(Predicate<CacheEntry> filter) {
        List<CacheEntry> result = new ArrayList<>();
        for (CacheEntry head : table) {
            for (CacheEntry e = head; e != null; e = e.next) {
                if (filter.test(e)) {
                    result.add(e);
                }
            }
        }
        return result;
    }

    // ------------------------------------------------------------------------------------------
    // snapshots
    // ------------------------------------------------------------------------------------------

    /**
     * Freezes the current contents: O(buckets) (one array copy, into a released snapshot's array
     * when one of this size is spare), copies no entry. Call {@link #release} after.
     */
    public CowSnapshot snapshot() {
        int version;
        CacheEntry[] copy;
        synchronized (snapshotVersions) {
            version = ++mapVersion;
            copy =
                    spareBuckets != null && spareBuckets.length == table.length
                            ? spareBuckets
                            : null;
            spareBuckets = null;
            if (copy == null) {
                copy = new CacheEntry[table.length];
            }
            snapshotVersions.put(version, copy);
            highestRequiredSnapshotVersion = version;
        }
        System.arraycopy(table, 0, copy, 0, table.length);
        return new CowSnapshot(version, copy, size);
    }

    /**
     * Ends a snapshot; once none runs, writes stop copying. May be called from any thread, once the
     * snapshot's view is no longer read (its bucket array is cleared here and reused).
     */
    public void release(int snapshotVersion) {
        CacheEntry[] released;
        synchronized (snapshotVersions) {
            released = snapshotVersions.remove(snapshotVersion);
            highestRequiredSnapshotVersion =
                    snapshotVersions.isEmpty() ? 0 : snapshotVersions.lastKey();
        }
        if (released != null) {
            // drop the references (they would keep evicted entries alive), then offer it
            Arrays.fill(released, null);
            synchronized (snapshotVersions) {
                spareBuckets = released;
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // accessors
    // ------------------------------------------------------------------------------------------

    public int size() {
        return size;
    }

    public int maxEntries() {
        return maxEntries;
    }

    public int bucketCount() {
        return table.length;
    }

    public long evictions() {
        return evictions;
    }

    /** Entries copied because a running snapshot could see them (for tests and metrics). */
    public long copiesOnWrite() {
        return copiesOnWrite;
    }

    public int runningSnapshots() {
        synchronized (snapshotVersions) {
            return snapshotVersions.size();
        }
    }

    // ------------------------------------------------------------------------------------------
    // internals
    // ------------------------------------------------------------------------------------------

    /**
     * Evicts tail entries until the bound holds, giving used entries their second chance. Ends:
     * each relink clears a flag, so after at most one pass over the list the tail is unflagged.
     */
    private void evictIfNeeded(CacheEntry keep) throws Exception {
        while (size > maxEntries) {
            CacheEntry victim = lru.lruPrev;
            if (victim == lru) {
                return;
            }
            if (victim.referenced || victim == keep) {
                // used since it was linked (or the entry this call returns): second chance
                victim.referenced = false;
                unlink(victim);
                linkFront(victim);
                continue;
            }
            if (victim.dirty) {
                victim.owner.writeBack(victim);
            }
            remove(victim);
            evictions++;
        }
    }

    private CacheEntry replaceWithCopy(CacheEntry original, CacheEntry livePrev, int idx) {
        CacheEntry copy = original.copy(mapVersion, original.next);
        if (livePrev == null) {
            table[idx] = copy;
        } else {
            livePrev.next = copy;
        }
        takeLruPlace(original, copy);
        return copy;
    }

    private void resize() {
        CacheEntry[] old = table;
        CacheEntry[] grown = new CacheEntry[old.length * 2];
        int mask = grown.length - 1;
        int required = highestRequiredSnapshotVersion;
        for (CacheEntry head : old) {
            CacheEntry e = head;
            while (e != null) {
                CacheEntry following = e.next;
                CacheEntry moved = e;
                if (e.entryVersion < required) {
                    // frozen: its 'next' must stay as the snapshot saw it
                    moved = e.copy(mapVersion, null);
                    takeLruPlace(e, moved);
                }
                int idx = moved.hash & mask;
                moved.next = grown[idx];
                grown[idx] = moved;
                e = following;
            }
        }
        table = grown;
        threshold = grown.length == MAX_CAPACITY ? Integer.MAX_VALUE : grown.length / 4 * 3;
    }

    /** The copy replaces the original in the LRU list (same recency); counts the copy. */
    private void takeLruPlace(CacheEntry original, CacheEntry copy) {
        copy.lruPrev = original.lruPrev;
        copy.lruNext = original.lruNext;
        copy.lruPrev.lruNext = copy;
        copy.lruNext.lruPrev = copy;
        original.lruPrev = null;
        original.lruNext = null;
        copiesOnWrite++;
    }

    private void linkFront(CacheEntry e) {
        e.lruTick = ++tick;
        e.lruPrev = lru;
        e.lruNext = lru.lruNext;
        lru.lruNext.lruPrev = e;
        lru.lruNext = e;
    }

    private void unlink(CacheEntry e) {
        e.lruPrev.lruNext = e.lruNext;
        e.lruNext.lruPrev = e.lruPrev;
        e.lruPrev = null;
        e.lruNext = null;
    }

    static int hash(CacheOwner owner, Object key, Object namespace, Object userKey) {
        int h = key.hashCode();
        h = h * 31 + namespace.hashCode();
        if (userKey != null) {
            h = h * 31 + userKey.hashCode();
        }
        h ^= System.identityHashCode(owner) * 0x9E3779B9;
        // murmur3 finalizer: spread high bits into the bucket index
        h ^= h >>> 16;
        h *= 0x85EBCA6B;
        h ^= h >>> 13;
        h *= 0xC2B2AE35;
        h ^= h >>> 16;
        return h;
    }

    /** Verifies invariants 1-3; for tests. Throws {@link IllegalStateException} on a violation. */
    public void checkInvariants() {
        int inTable = 0;
        java.util.Set<CacheEntry> seen =
                java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        for (int i = 0; i < table.length; i++) {
            for (CacheEntry e = table[i]; e != null; e = e.next) {
                inTable++;
                if ((e.hash & (table.length - 1)) != i) {
                    throw new IllegalStateException("entry in wrong bucket: " + e);
                }
                for (CacheEntry o = e.next; o != null; o = o.next) {
                    if (o.matches(e.owner, e.key, e.namespace, e.userKey, e.hash)) {
                        throw new IllegalStateException("duplicate identity: " + e);
                    }
                }
                seen.add(e);
            }
        }
        int inLru = 0;
        for (CacheEntry e = lru.lruNext; e != lru; e = e.lruNext) {
            inLru++;
            if (!seen.contains(e)) {
                throw new IllegalStateException("LRU list holds an entry not in the table: " + e);
            }
            if (e.lruNext.lruPrev != e) {
                throw new IllegalStateException("broken LRU links at " + e);
            }
            if (e.lruTick > tick || (e.lruNext != lru && e.lruNext.lruTick >= e.lruTick)) {
                throw new IllegalStateException(
                        "stamps not strictly decreasing towards the tail at "
                                + e
                                + ", tick "
                                + tick);
            }
            if (tick - e.lruTick < inLru - 1) {
                throw new IllegalStateException(
                        "entry stamped "
                                + e.lruTick
                                + " at tick "
                                + tick
                                + " has "
                                + (inLru - 1)
                                + " entries in front of it: "
                                + e);
            }
        }
        if (inTable != size || inLru != size) {
            throw new IllegalStateException(
                    "size " + size + " but table has " + inTable + " and LRU list " + inLru);
        }
        if (size > maxEntries) {
            throw new IllegalStateException("size " + size + " exceeds bound " + maxEntries);
        }
    }
}
