package io.github.flinkstate.lru.cow;

import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import org.apache.flink.api.common.typeutils.TypeSerializer;

/**
 * A bounded hash map of {@link CacheEntry entries} with least-recently-used eviction and
 * copy-on-write snapshots, the object cache behind the LRU cache backend.
 *
 * <p>Structure: a chained hash table (power-of-two bucket array) for lookups plus a doubly linked,
 * circular LRU list through all live entries (head = most recently used). The bucket array is
 * segmented: a directory of segments of at most {@value #SEGMENT_BUCKETS} buckets each, every
 * segment stamped with the map version it was created or copied at. Snapshots capture the directory
 * only: {@link #snapshot()} bumps the map version and copies the directory, which is O(number of
 * segments), about 500 references for a million entries, independent of the entries. From then on,
 * the first write into a bucket of a segment the snapshot can see copies that segment (16 KiB), and
 * a write to an entry that the snapshot can reach first copies that entry and the chain in front of
 * it (path copy), so the snapshot keeps seeing the buckets, entries, values and chains as they
 * were; each segment and each entry is copied at most once per snapshot, because the copy carries
 * the new version. The LRU list is not part of what snapshots read, so recency can be updated on
 * any entry without copying.
 *
 * <p>Recency with second chance (CLOCK): the LRU list is ordered by the time each entry was last
 * linked at the front (insert or promotion), most recent at the head. A hit does not relink: it
 * only sets the entry's {@code referenced} flag, a write into the entry the lookup has just read
 * (relinking would write two neighbouring entries, i.e. two more random memory accesses and
 * reference stores per hit). Eviction looks at the tail: an entry used since it was linked loses
 * its flag and is linked at the front (its second chance); the first tail entry without the flag is
 * the victim. So the victim is always the least recently linked entry that was not used since it
 * was linked, and an entry used since it was last linked is never evicted before every unused entry
 * behind it; the cost of promotion is paid once per eviction pass over a used entry, not once per
 * hit, and a cache that holds its working set (no evictions) never relinks.
 *
 * <p>Thread safety: one writer (the task thread) performs every operation except {@link
 * #release(int)}, which a snapshot's thread calls when it is done, the reads of a {@link
 * CowSnapshot}, and {@link #peekFromOtherThread} (queryable state). Only the snapshot-version
 * bookkeeping is synchronized; resizes are announced to other threads' lookups by a stamp.
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
 * </ol>
 */
public final class CowLruMap {

    private static final int MIN_CAPACITY = 16;

    /** How long {@link #peekFromOtherThread} waits for a running resize. */
    private static final long RESIZE_WAIT_NANOS = 10_000_000_000L;

    private static final int MAX_CAPACITY = 1 << 30;

    /** log2 of {@link #SEGMENT_BUCKETS}. */
    private static final int SEGMENT_SHIFT = 12;

    /** Buckets per segment of tables at least this large; smaller tables are one segment. */
    static final int SEGMENT_BUCKETS = 1 << SEGMENT_SHIFT;

    private final int maxEntries;

    /**
     * The bucket array as segments: bucket {@code i} is {@code segments[i >>> SEGMENT_SHIFT][i &
     * segmentMask]}. A segment array that a running snapshot's directory may hold ({@code
     * segmentVersions[s] < highestRequiredSnapshotVersion}) is never written: {@link #setBucket}
     * copies it first.
     */
    private CacheEntry[][] segments;

    /** The map version each segment array was created or copied at. */
    private int[] segmentVersions;

    /** Buckets in the table minus one (a power of two minus one). */
    private int bucketMask;

    /** Buckets per segment minus one. */
    private int segmentMask;

    private int size;
    private int threshold;

    /** Version given to entries created or copied now. Only the writer changes it. */
    private int mapVersion;

    /** The newest version any running snapshot still reads; 0 when no snapshot runs. */
    private volatile int highestRequiredSnapshotVersion;

    /**
     * A sequence lock for {@link #peekFromOtherThread}: odd while {@link #resize} relinks the
     * entries into a new table, incremented before and after it. Only the writer changes it.
     */
    private volatile int resizeStamp;

    /** Versions of the running snapshots. Guarded by itself. */
    private final TreeSet<Integer> snapshotVersions = new TreeSet<>();

    /** Sentinel of the circular LRU list: {@code lru.lruNext} is the most recently used. */
    private final CacheEntry lru = new CacheEntry(null, null, null, 0, 0, null, false, 0, null);

    /** Admission of blind writes (list appends) while the map is full. */
    private final BlindWriteAdmission blindWrites;

    /**
     * Admission of blind updates (a whole value written with no read before it) while the map is
     * full; its own doorkeeper, so that updates do not make the appends' one forget lists sooner.
     */
    private final BlindWriteAdmission blindUpdates;

    /** Admission of reads that miss while the map is full (scan resistance), or null: plain LRU. */
    private final ReadAdmission reads;

    private long evictions;
    private long blindWritesRefused;
    private long blindUpdatesRefused;
    private long readsRefused;
    private long copiesOnWrite;
    private long segmentCopies;

    public CowLruMap(int maxEntries) {
        this(maxEntries, true);
    }

    /**
     * @param scanResistant whether reads that miss a full map are filtered while reads hardly hit
     *     (see {@link ReadAdmission}); false: every miss is cached
     */
    public CowLruMap(int maxEntries, boolean scanResistant) {
        if (maxEntries <= 0) {
            throw new IllegalArgumentException("maxEntries must be positive: " + maxEntries);
        }
        this.maxEntries = maxEntries;
        this.blindWrites = new BlindWriteAdmission(maxEntries);
        this.blindUpdates = new BlindWriteAdmission(maxEntries);
        this.reads = scanResistant ? new ReadAdmission(maxEntries) : null;
        this.mapVersion = 0;
        allocateTable(MIN_CAPACITY);
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
        for (CacheEntry e = bucket(h & bucketMask); e != null; e = e.next) {
            if (e.matches(owner, key, namespace, userKey, h)) {
                return e;
            }
        }
        return null;
    }

    /**
     * Like {@link #peek}, for a thread other than the writer (queryable state); changes nothing.
     * Not synchronized with the writer's other operations: an entry being inserted or copied at
     * that moment may be missed or seen in its previous version (the caller then answers from the
     * delegate, as a read just before the write would). A resize, which relinks every entry, would
     * make entries that stay cached look absent: a lookup that a resize overlapped is repeated
     * ({@link #resizeStamp}), waiting at most {@link #RESIZE_WAIT_NANOS} for a running resize.
     *
     * @throws IllegalStateException if a resize kept the table busy for that long
     */
    public CacheEntry peekFromOtherThread(
            CacheOwner owner, Object key, Object namespace, Object userKey) {
        int h = hash(owner, key, namespace, userKey);
        long start = System.nanoTime();
        for (int attempt = 1; ; attempt++) {
            int stamp = resizeStamp;
            if ((stamp & 1) == 0) {
                CacheEntry[][] directory = segments;
                CacheEntry[] segment = directory[(h >>> SEGMENT_SHIFT) & (directory.length - 1)];
                CacheEntry found = null;
                int steps = 0;
                for (CacheEntry e = segment[h & (segment.length - 1)]; e != null; e = e.next) {
                    if (e.matches(owner, key, namespace, userKey, h)) {
                        found = e; // an entry with this identity is the right one in any case
                        break;
                    }
                    // a chain walked during a resize may mix old and new links: check on the way
                    if (++steps % 256 == 0 && resizeStamp != stamp) {
                        break;
                    }
                }
                if (found != null) {
                    return found;
                }
                VarHandle.acquireFence(); // the chain reads above happen before the re-check
                if (resizeStamp == stamp) {
                    return null; // no resize overlapped the lookup: a real miss
                }
            }
            if (System.nanoTime() - start > RESIZE_WAIT_NANOS) {
                throw new IllegalStateException(
                        "The LRU cache's table was resizing for over "
                                + RESIZE_WAIT_NANOS / 1_000_000
                                + " ms; the read from another thread gave up");
            }
            if (attempt < 1_000) {
                Thread.onSpinWait();
            } else {
                LockSupport.parkNanos(100_000); // a large table's resize takes milliseconds
            }
        }
    }

    /**
     * Returns the live entry with the identity of {@code maybeStale}, which may have been copied.
     */
    public CacheEntry findLive(CacheEntry maybeStale) {
        return peek(maybeStale.owner, maybeStale.key, maybeStale.namespace, maybeStale.userKey());
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
        int idx = h & bucketMask;
        // A new head never needs an entry copy: the old head is not written; setBucket copies
        // the segment if a snapshot holds it.
        CacheEntry e =
                CacheEntry.create(
                        owner,
                        key,
                        namespace,
                        userKey,
                        h,
                        keyGroup,
                        value,
                        dirty,
                        mapVersion,
                        bucket(idx));
        setBucket(idx, e);
        linkFront(e);
        size++;
        owner.onInserted(e);
        if (dirty) {
            owner.onDirtyChanged(e, true);
        }
        if (size > threshold && bucketMask + 1 < MAX_CAPACITY) {
            resize();
        }
        evictIfNeeded(e);
        return e;
    }

    /**
     * Whether a write that reads nothing (a list append) to an identity that is not cached should
     * take a cache slot: always while the map has room; when it is full (the insert would evict),
     * only for an identity refused recently (see {@link BlindWriteAdmission}). A refused write goes
     * straight to the delegate.
     */
    public boolean admitBlindWrite(CacheOwner owner, Object key, Object namespace) {
        if (size < maxEntries || blindWrites.admit(hash(owner, key, namespace, null))) {
            return true;
        }
        blindWritesRefused++;
        return false;
    }

    /**
     * Like {@link #admitBlindWrite}, for a write that replaces a whole value (an {@code update}
     * with no read before it), with a doorkeeper of its own. A refused update goes straight to the
     * delegate.
     */
    public boolean admitBlindUpdate(CacheOwner owner, Object key, Object namespace) {
        if (size < maxEntries || blindUpdates.admit(hash(owner, key, namespace, null))) {
            return true;
        }
        blindUpdatesRefused++;
        return false;
    }

    /**
     * Counts a read of a whole value (not a list's) or of one map entry as a hit or a miss, for
     * {@link #admitRead}; only while the map is full (a cache that is still filling misses by
     * nature, and a hit on a cache that is not full costs one comparison here).
     */
    public void recordRead(boolean hit) {
        if (size >= maxEntries && reads != null) {
            reads.record(hit);
        }
    }

    /**
     * Whether a read of a whole value or map entry that missed should be cached: always while the
     * map has room; when it is full, unless recent reads hardly ever hit (see {@link
     * ReadAdmission}). A refused read, and the writes of the same identity that follow it, go to
     * the delegate.
     */
    public boolean admitRead() {
        if (size < maxEntries || reads == null || reads.admit()) {
            return true;
        }
        readsRefused++;
        return false;
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
        int idx = target.hash & bucketMask;
        CacheEntry prev = null;
        CacheEntry current = bucket(idx);
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
                || target.value == CacheEntry.ABSENT
                || target.value == null) { // a map entry's null value: nothing to copy
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
        int idx = target.hash & bucketMask;
        CacheEntry prev = null;
        CacheEntry current = bucket(idx);
        while (current != target) {
            if (current == null) {
                throw new IllegalStateException("Entry is not live: " + target);
            }
            prev = current;
            current = current.next;
        }
        if (prev == null) {
            setBucket(idx, target.next);
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
        for (CacheEntry[] segment : segments) {
            for (CacheEntry head : segment) {
                for (CacheEntry e = head; e != null; e = e.next) {
                    if (filter.test(e)) {
                        result.add(e);
                    }
                }
            }
        }
        return result;
    }

    // ------------------------------------------------------------------------------------------
    // snapshots
    // ------------------------------------------------------------------------------------------

    /**
     * Freezes the current contents: O(segments) (a copy of the segment directory), copies no bucket
     * and no entry. Call {@link #release} after.
     */
    public CowSnapshot snapshot() {
        int version;
        synchronized (snapshotVersions) {
            version = ++mapVersion;
            snapshotVersions.add(version);
            highestRequiredSnapshotVersion = version;
        }
        // every segment now has a version below the required one: none is written again
        return new CowSnapshot(version, segments.clone(), size);
    }

    /**
     * Ends a snapshot; once none runs, writes stop copying. May be called from any thread, once the
     * snapshot's view is no longer read.
     */
    public void release(int snapshotVersion) {
        synchronized (snapshotVersions) {
            snapshotVersions.remove(snapshotVersion);
            highestRequiredSnapshotVersion =
                    snapshotVersions.isEmpty() ? 0 : snapshotVersions.last();
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
        return bucketMask + 1;
    }

    public long evictions() {
        return evictions;
    }

    /** Blind writes refused by {@link #admitBlindWrite} (they went to the delegate). */
    public long blindWritesRefused() {
        return blindWritesRefused;
    }

    /** Blind updates refused by {@link #admitBlindUpdate} (they went to the delegate). */
    public long blindUpdatesRefused() {
        return blindUpdatesRefused;
    }

    /** Reads refused by {@link #admitRead} (served by the delegate, not cached). */
    public long readsRefused() {
        return readsRefused;
    }

    /** Whether reads that miss are filtered now (see {@link ReadAdmission}); for tests. */
    public boolean filteringReads() {
        return reads != null && reads.filtering();
    }

    /** Entries copied because a running snapshot could see them (for tests and metrics). */
    public long copiesOnWrite() {
        return copiesOnWrite;
    }

    /**
     * Bucket segments copied because a running snapshot held them (for tests and metrics); at most
     * one per segment per snapshot.
     */
    public long segmentCopies() {
        return segmentCopies;
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

    private CacheEntry bucket(int idx) {
        return segments[idx >>> SEGMENT_SHIFT][idx & segmentMask];
    }

    /** Writes a bucket, copying its segment first if a running snapshot may hold it. */
    private void setBucket(int idx, CacheEntry head) {
        int s = idx >>> SEGMENT_SHIFT;
        CacheEntry[] segment = segments[s];
        if (segmentVersions[s] < highestRequiredSnapshotVersion) {
            segment = segment.clone();
            segments[s] = segment;
            segmentVersions[s] = mapVersion;
            segmentCopies++;
        }
        segment[idx & segmentMask] = head;
    }

    /** Installs an empty table of {@code capacity} buckets (a power of two), all segments new. */
    private void allocateTable(int capacity) {
        int perSegment = Math.min(capacity, SEGMENT_BUCKETS);
        int count = capacity / perSegment;
        CacheEntry[][] fresh = new CacheEntry[count][];
        for (int s = 0; s < count; s++) {
            fresh[s] = new CacheEntry[perSegment];
        }
        int[] versions = new int[count];
        Arrays.fill(versions, mapVersion);
        segments = fresh;
        segmentVersions = versions;
        bucketMask = capacity - 1;
        segmentMask = perSegment - 1;
        threshold = capacity == MAX_CAPACITY ? Integer.MAX_VALUE : capacity / 4 * 3;
    }

    private CacheEntry replaceWithCopy(CacheEntry original, CacheEntry livePrev, int idx) {
        CacheEntry copy = original.copy(mapVersion, original.next);
        if (livePrev == null) {
            setBucket(idx, copy);
        } else {
            livePrev.next = copy;
        }
        takeLruPlace(original, copy);
        return copy;
    }

    /** Doubles the table into new segments; a snapshot keeps the old ones. */
    private void resize() {
        resizeStamp++; // odd: lookups from other threads that overlap this one look again
        VarHandle.storeStoreFence(); // ... and see it odd before any relinking below
        try {
            relinkIntoDoubledTable();
        } finally {
            resizeStamp++;
        }
    }

    private void relinkIntoDoubledTable() {
        CacheEntry[][] old = segments;
        allocateTable((bucketMask + 1) * 2);
        int required = highestRequiredSnapshotVersion;
        for (CacheEntry[] segment : old) {
            for (CacheEntry head : segment) {
                CacheEntry e = head;
                while (e != null) {
                    CacheEntry following = e.next;
                    CacheEntry moved = e;
                    if (e.entryVersion < required) {
                        // frozen: its 'next' must stay as the snapshot saw it
                        moved = e.copy(mapVersion, null);
                        takeLruPlace(e, moved);
                    }
                    int idx = moved.hash & bucketMask;
                    moved.next = bucket(idx);
                    // the segments are new (version mapVersion >= required): no copy
                    segments[idx >>> SEGMENT_SHIFT][idx & segmentMask] = moved;
                    e = following;
                }
            }
        }
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
        for (int i = 0; i <= bucketMask; i++) {
            for (CacheEntry e = bucket(i); e != null; e = e.next) {
                inTable++;
                if ((e.hash & bucketMask) != i) {
                    throw new IllegalStateException("entry in wrong bucket: " + e);
                }
                for (CacheEntry o = e.next; o != null; o = o.next) {
                    if (o.matches(e.owner, e.key, e.namespace, e.userKey(), e.hash)) {
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
