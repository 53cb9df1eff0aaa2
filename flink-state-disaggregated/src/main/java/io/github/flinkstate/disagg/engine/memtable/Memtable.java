package io.github.flinkstate.disagg.engine.memtable;

import io.github.flinkstate.disagg.engine.key.Bytes;
import io.github.flinkstate.disagg.engine.key.EntryType;
import io.github.flinkstate.disagg.engine.key.Versioned;
import io.github.flinkstate.disagg.engine.sst.BloomFilter;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToIntFunction;

/**
 * The in-memory write buffer: a sorted map from key to its newest entry, plus the prefix tombstones
 * issued while this memtable was active, and a {@link MemtableFilter} over the keys written (and
 * their bloom prefixes), so that reads of keys and lists it does not hold skip the sorted map.
 *
 * <p>Thread safety: one writer at a time (the store serialises writes under its write lock); any
 * number of concurrent readers. Iterators are weakly consistent (they may or may not see writes
 * made after their creation). After {@link #freeze()} the memtable is immutable.
 *
 * <p>Lifecycle: active (takes writes) -> frozen (queued for flush, still readable) -> dropped once
 * the flushed file is installed in the current version.
 *
 * <p>Invariants (checked by {@link #checkInvariants()}):
 *
 * <ol>
 *   <li>Every entry has a valid type and a sequence number in {@code [1, maxSeq]}.
 *   <li>No entry is covered by a prefix tombstone of this memtable with a higher sequence number (a
 *       prefix delete removes the older entries it covers).
 *   <li>{@link #approximateBytes()} equals the filter's size (none before the first write) plus the
 *       sum of the per-entry charges.
 *   <li>Every key in the sorted map, and its bloom prefix, passes the filter.
 *   <li>A frozen memtable is never written.
 * </ol>
 */
public final class Memtable {

    /** Fixed per-entry charge that approximates skip-list and object overhead. */
    static final int ENTRY_OVERHEAD = 64;

    private final long id;
    private final ToIntFunction<byte[]> bloomPrefix;

    /** Null until the first write; replaced by a larger one when full (see MemtableFilter). */
    private volatile MemtableFilter filter;

    private final ConcurrentSkipListMap<byte[], Versioned> entries =
            new ConcurrentSkipListMap<>(Bytes::compare);
    private final ConcurrentSkipListMap<byte[], Long> prefixTombstones =
            new ConcurrentSkipListMap<>(Bytes::compare);
    private final Set<Integer> tombstoneLengths = ConcurrentHashMap.newKeySet();
    private final AtomicLong bytes = new AtomicLong();

    /** Keys in the map; written by the writer only. */
    private int keyCount;

    private volatile long maxSeq;
    private volatile long minSeq = Long.MAX_VALUE;
    private volatile boolean frozen;

    /**
     * @param bloomPrefix null, or the store's {@code LsmOptions.bloomPrefix}: the prefixes it names
     *     are added to the filter beside whole keys, for {@link #mightContainPrefix}
     */
    public Memtable(long id, ToIntFunction<byte[]> bloomPrefix) {
        this.id = id;
        this.bloomPrefix = bloomPrefix;
    }

    /** A memtable without bloom prefixes. */
    public Memtable(long id) {
        this(id, null);
    }

    public long id() {
        return id;
    }

    /**
     * Inserts a put or point delete; returns by how much {@link #approximateBytes()} changed.
     * REQUIRES: not frozen; seq greater than all prior.
     */
    public long add(byte[] key, long seq, byte type, byte[] value) {
        checkWritable(seq);
        Versioned e = new Versioned(seq, type, type == EntryType.PUT ? value : null);
        Versioned old = entries.put(key, e);
        long delta = charge(key, e) - (old == null ? 0 : charge(key, old));
        if (old == null) {
            keyCount++;
            delta += addToFilter(key);
        }
        bytes.addAndGet(delta);
        noteSeq(seq);
        return delta;
    }

    /**
     * Records a prefix tombstone and drops the older entries it covers; returns by how much {@link
     * #approximateBytes()} changed. REQUIRES: as add.
     */
    public long deletePrefix(byte[] prefix, long seq) {
        checkWritable(seq);
        long delta = 0;
        Long old = prefixTombstones.put(prefix, seq);
        tombstoneLengths.add(prefix.length);
        if (old == null) {
            delta += prefix.length + ENTRY_OVERHEAD;
        }
        if (mayHoldKeysStartingWith(prefix)) {
            NavigableMap<byte[], Versioned> covered = rangeOf(prefix, Bytes.prefixLimit(prefix));
            for (Map.Entry<byte[], Versioned> c : covered.entrySet()) {
                if (entries.remove(c.getKey(), c.getValue())) {
                    keyCount--;
                    delta -= charge(c.getKey(), c.getValue());
                }
            }
        }
        bytes.addAndGet(delta);
        noteSeq(seq);
        return delta;
    }

    /**
     * Adds the new key {@code key} (already in the map) and its bloom prefix to the filter; a full
     * filter (counting the hashes of keys since removed) is first replaced by one sized for the
     * keys now held, filled from the map. Returns the change of the filter's size in bytes.
     * Rebuilds happen after at least half a filter's capacity of additions, so their cost per write
     * is constant. Readers may see the new entry before its bits only on another thread without a
     * happens-before edge to this write, where they could equally miss the entry itself.
     */
    private long addToFilter(byte[] key) {
        MemtableFilter f = filter;
        if (f != null && f.hashes() + 2 <= f.capacity()) {
            addHashes(f, key);
            return 0;
        }
        MemtableFilter next = MemtableFilter.sizedFor(2L * keyCount);
        for (byte[] k : entries.keySet()) {
            addHashes(next, k);
        }
        filter = next;
        return next.sizeBytes() - (f == null ? 0 : f.sizeBytes());
    }

    private void addHashes(MemtableFilter f, byte[] key) {
        f.add(BloomFilter.hash(key));
        int length = bloomPrefix == null ? -1 : bloomPrefix.applyAsInt(key);
        if (length > 0 && length < key.length) {
            f.add(BloomFilter.hash(key, length));
        }
    }

    /**
     * False only when the map surely holds no key starting with {@code prefix}: the prefix is a
     * whole bloom prefix that the filter rules out (a list cleared or replaced in a memtable that
     * never held it, the usual case, skips the search of the map).
     */
    private boolean mayHoldKeysStartingWith(byte[] prefix) {
        MemtableFilter f = filter;
        if (f == null) {
            return false; // nothing was ever written
        }
        return bloomPrefix == null
                || bloomPrefix.applyAsInt(prefix) != prefix.length
                || f.mightContain(BloomFilter.hash(prefix));
    }

    /** The newest entry for {@code key}, or {@code null}. */
    public Versioned get(byte[] key) {
        return get(key, BloomFilter.hash(key));
    }

    /** As {@link #get(byte[])} for a key whose {@code BloomFilter.hash} is {@code keyHash}. */
    public Versioned get(byte[] key, long keyHash) {
        MemtableFilter f = filter;
        return f != null && f.mightContain(keyHash) ? entries.get(key) : null;
    }

    /**
     * False when no key starting with the whole bloom prefix whose {@code BloomFilter.hash} is
     * {@code prefixHash} was written to this memtable (meaningful only with a bloom prefix
     * function, for prefixes it names).
     */
    public boolean mightContainPrefix(long prefixHash) {
        MemtableFilter f = filter;
        return f != null && f.mightContain(prefixHash);
    }

    /** Highest sequence number of a prefix tombstone of this memtable covering key, or 0. */
    public long coveringTombstoneSeq(byte[] key) {
        if (prefixTombstones.isEmpty()) {
            return 0;
        }
        long best = 0;
        for (int len : tombstoneLengths) {
            if (len <= key.length) {
                Long s = prefixTombstones.get(java.util.Arrays.copyOf(key, len));
                if (s != null && s > best) {
                    best = s;
                }
            }
        }
        return best;
    }

    /** A live view of the entries in {@code [lower, limit)}; limit null = unbounded. */
    public NavigableMap<byte[], Versioned> rangeOf(byte[] lower, byte[] limit) {
        return limit == null
                ? entries.tailMap(lower, true)
                : entries.subMap(lower, true, limit, false);
    }

    /** All prefix tombstones (prefix to sequence number); a live view. */
    public NavigableMap<byte[], Long> prefixTombstones() {
        return prefixTombstones;
    }

    public void freeze() {
        frozen = true;
    }

    public boolean isFrozen() {
        return frozen;
    }

    public boolean isEmpty() {
        return entries.isEmpty() && prefixTombstones.isEmpty();
    }

    public int entryCount() {
        return entries.size();
    }

    public long approximateBytes() {
        return bytes.get();
    }

    public long maxSeq() {
        return maxSeq;
    }

    public long minSeq() {
        return minSeq;
    }

    /** Verifies the class invariants; throws {@link IllegalStateException} on violation. */
    public void checkInvariants() {
        MemtableFilter f = filter;
        long sum = f == null ? 0 : f.sizeBytes();
        for (Map.Entry<byte[], Versioned> e : entries.entrySet()) {
            Versioned v = e.getValue();
            check(EntryType.isValid(v.type()), "bad type " + v.type());
            check(v.seq() >= 1 && v.seq() <= maxSeq, "seq out of range " + v.seq());
            check(
                    coveringTombstoneSeq(e.getKey()) < v.seq(),
                    "entry covered by own tombstone " + Bytes.hex(e.getKey()));
            sum += charge(e.getKey(), v);
            check(f.mightContain(BloomFilter.hash(e.getKey())), "key not in the filter");
            int length = bloomPrefix == null ? -1 : bloomPrefix.applyAsInt(e.getKey());
            check(
                    length <= 0 || f.mightContain(BloomFilter.hash(e.getKey(), length)),
                    "bloom prefix not in the filter");
        }
        for (Map.Entry<byte[], Long> t : prefixTombstones.entrySet()) {
            check(tombstoneLengths.contains(t.getKey().length), "tombstone length missing");
            sum += t.getKey().length + ENTRY_OVERHEAD;
        }
        check(sum == bytes.get(), "byte accounting " + sum + " != " + bytes.get());
    }

    private static long charge(byte[] key, Versioned e) {
        return key.length + (e.value() == null ? 0 : e.value().length) + ENTRY_OVERHEAD;
    }

    private void checkWritable(long seq) {
        if (frozen) {
            throw new IllegalStateException("memtable " + id + " is frozen");
        }
        if (seq <= maxSeq) {
            throw new IllegalArgumentException("sequence " + seq + " not above " + maxSeq);
        }
    }

    private void noteSeq(long seq) {
        maxSeq = seq;
        if (minSeq == Long.MAX_VALUE) {
            minSeq = seq;
        }
    }

    private static void check(boolean ok, String msg) {
        if (!ok) {
            throw new IllegalStateException("Memtable invariant violated: " + msg);
        }
    }
}
