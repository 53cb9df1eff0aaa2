package io.github.flinkstate.disagg.engine.memtable;

import io.github.flinkstate.disagg.engine.key.Bytes;
import io.github.flinkstate.disagg.engine.key.EntryType;
import io.github.flinkstate.disagg.engine.key.Versioned;
import io.github.flinkstate.disagg.engine.sst.BloomFilter;
import java.util.Arrays;
import java.util.function.ToIntFunction;

/**
 * The in-memory write buffer: a sorted map from key to its newest entry and a sorted set of the
 * prefix tombstones issued while this memtable was active, both in {@link ArenaSkipList}s (a few
 * large arrays, not objects per entry), plus a {@link MemtableFilter} over the keys written (and
 * their bloom prefixes), so that reads of keys and lists it does not hold skip the sorted map, and
 * a {@link KeyHashIndex} of the keys, so that point reads and overwrites of keys it holds skip the
 * search of the sorted map.
 *
 * <p>Thread safety: one writer at a time (the store serialises writes under its write lock); any
 * number of concurrent readers. Cursors are weakly consistent (they may or may not see writes made
 * after their creation). After {@link #freeze()} the memtable is immutable.
 *
 * <p>Lifecycle: active (takes writes) -> frozen (queued for flush, still readable) -> dropped once
 * the flushed file is installed in the current version.
 *
 * <p>Memory: {@link #approximateBytes()} is what the arenas hold (records, keys, nodes; not the
 * unused end of their last chunks) plus the filter and the key hash index (11 to 21 bytes per key).
 * A rewritten key's old value and a key removed by a prefix tombstone keep their bytes until the
 * memtable is dropped, as every overwritten version does in RocksDB's memtable.
 *
 * <p>Invariants (checked by {@link #checkInvariants()}):
 *
 * <ol>
 *   <li>Every live entry has a valid type and a sequence number in {@code [1, maxSeq]}.
 *   <li>No live entry is covered by a prefix tombstone of this memtable with a higher sequence
 *       number (a prefix delete removes the older entries it covers).
 *   <li>Every live key, and its bloom prefix, passes the filter; {@link #entryCount()} counts the
 *       live keys.
 *   <li>A frozen memtable is never written.
 * </ol>
 */
public final class Memtable {

    private final long id;
    private final ToIntFunction<byte[]> bloomPrefix;

    /** Null until the first write; replaced by a larger one when full (see MemtableFilter). */
    private volatile MemtableFilter filter;

    private final ArenaSkipList entries = new ArenaSkipList(true);
    private final ArenaSkipList prefixTombstones = new ArenaSkipList();

    /** Distinct lengths of the prefix tombstones, copied on change; written by the writer only. */
    private volatile int[] tombstoneLengths = new int[0];

    /** Live keys in {@link #entries}; written by the writer only. */
    private volatile int keyCount;

    private volatile int tombstoneCount;
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
     * Inserts a put or point delete (copying key and value); returns by how much {@link
     * #approximateBytes()} changed. REQUIRES: not frozen; seq greater than all prior.
     */
    public long add(byte[] key, long seq, byte type, byte[] value) {
        checkWritable(seq);
        long before = approximateBytes();
        long hash = BloomFilter.hash(key);
        if (entries.put(key, hash, seq, type, type == EntryType.PUT ? value : null)) {
            keyCount++;
            addToFilter(key, hash);
        }
        noteSeq(seq);
        return approximateBytes() - before;
    }

    /**
     * Records a prefix tombstone and removes the older entries it covers; returns by how much
     * {@link #approximateBytes()} changed. REQUIRES: as add.
     */
    public long deletePrefix(byte[] prefix, long seq) {
        checkWritable(seq);
        long before = approximateBytes();
        if (prefixTombstones.put(prefix, seq, EntryType.DELETE, null)) {
            tombstoneCount++;
            noteTombstoneLength(prefix.length);
        }
        if (mayHoldKeysStartingWith(prefix)) {
            keyCount -= entries.removePrefix(prefix);
        }
        noteSeq(seq);
        return approximateBytes() - before;
    }

    private void noteTombstoneLength(int length) {
        int[] lengths = tombstoneLengths;
        for (int l : lengths) {
            if (l == length) {
                return;
            }
        }
        int[] next = Arrays.copyOf(lengths, lengths.length + 1);
        next[lengths.length] = length;
        tombstoneLengths = next;
    }

    /**
     * Adds the new key {@code key} (already in the map) and its bloom prefix to the filter; a full
     * filter (counting the hashes of keys since removed) is first replaced by one sized for the
     * keys now held, filled from the map. Rebuilds happen after at least half a filter's capacity
     * of additions, so their cost per write is constant. Readers may see the new entry before its
     * bits only on another thread without a happens-before edge to this write, where they could
     * equally miss the entry itself.
     */
    private void addToFilter(byte[] key, long hash) {
        MemtableFilter f = filter;
        if (f != null && f.hashes() + 2 <= f.capacity()) {
            addHashes(f, key, hash);
            return;
        }
        MemtableFilter next = MemtableFilter.sizedFor(2L * keyCount);
        for (long n = entries.next(0); n != 0; n = entries.next(n)) {
            if (entries.record(n) != ArenaSkipList.REMOVED) {
                byte[] k = entries.key(n);
                addHashes(next, k, BloomFilter.hash(k));
            }
        }
        filter = next;
    }

    private void addHashes(MemtableFilter f, byte[] key, long hash) {
        f.add(hash);
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
        if (f == null || !f.mightContain(keyHash)) {
            return null;
        }
        long n = entries.findExactHashed(key, keyHash);
        if (n == 0) {
            return null;
        }
        long record = entries.record(n);
        return record == ArenaSkipList.REMOVED
                ? null
                : new Versioned(entries.seq(record), entries.type(record), entries.value(record));
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
        if (tombstoneCount == 0) {
            return 0;
        }
        long best = 0;
        for (int length : tombstoneLengths) {
            if (length <= key.length) {
                long n = prefixTombstones.findExact(key, length);
                if (n != 0) {
                    best = Math.max(best, prefixTombstones.seq(prefixTombstones.record(n)));
                }
            }
        }
        return best;
    }

    /** A cursor over the live entries, in key order; position it with {@link Cursor#seek}. */
    public Cursor cursor() {
        return new Cursor(entries);
    }

    /** A cursor over the prefix tombstones (key: the prefix; no value), in prefix order. */
    public Cursor tombstoneCursor() {
        return new Cursor(prefixTombstones);
    }

    /**
     * A position in one of the memtable's sorted maps, skipping removed keys. Each position reads
     * its record once, so key, sequence number, type and value always belong together.
     *
     * <p>Thread safety: confined to one thread; weakly consistent with concurrent writes.
     */
    public static final class Cursor {
        private final ArenaSkipList list;
        private long node;
        private long record;

        private Cursor(ArenaSkipList list) {
            this.list = list;
        }

        /** Moves to the first live key at least {@code target}. */
        public void seek(byte[] target) {
            settle(list.ceiling(target));
        }

        public boolean valid() {
            return node != 0;
        }

        /** REQUIRES {@link #valid()}. */
        public void next() {
            settle(list.next(node));
        }

        private void settle(long n) {
            while (n != 0) {
                long r = list.record(n);
                if (r != ArenaSkipList.REMOVED) {
                    node = n;
                    record = r;
                    return;
                }
                n = list.next(n);
            }
            node = 0;
        }

        /** A copy of the current key. */
        public byte[] key() {
            return list.key(node);
        }

        public long seq() {
            return list.seq(record);
        }

        public byte type() {
            return list.type(record);
        }

        /** A copy of the current value, or null for a delete. */
        public byte[] value() {
            return list.value(record);
        }
    }

    public void freeze() {
        frozen = true;
    }

    public boolean isFrozen() {
        return frozen;
    }

    public boolean isEmpty() {
        return keyCount == 0 && tombstoneCount == 0;
    }

    /** Live keys. */
    public int entryCount() {
        return keyCount;
    }

    /**
     * The bytes the two arenas hold plus the sizes of the filter and the key hash index (none
     * before the first write).
     */
    public long approximateBytes() {
        return entries.usedBytes()
                + prefixTombstones.usedBytes()
                + filterBytes()
                + entries.indexBytes();
    }

    /** The filter's share of {@link #approximateBytes()}. */
    long filterBytes() {
        MemtableFilter f = filter;
        return f == null ? 0 : f.sizeBytes();
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
        int live = 0;
        byte[] previous = null;
        Cursor c = cursor();
        for (c.seek(Bytes.EMPTY); c.valid(); c.next()) {
            byte[] key = c.key();
            check(previous == null || Bytes.compare(previous, key) < 0, "keys out of order");
            previous = key;
            live++;
            check(EntryType.isValid(c.type()), "bad type " + c.type());
            check(c.seq() >= 1 && c.seq() <= maxSeq, "seq out of range " + c.seq());
            check(
                    coveringTombstoneSeq(key) < c.seq(),
                    "entry covered by own tombstone " + Bytes.hex(key));
            check(f.mightContain(BloomFilter.hash(key)), "key not in the filter");
            long n = entries.findExactHashed(key, BloomFilter.hash(key));
            check(
                    n != 0
                            && entries.keyEquals(n, key, key.length)
                            && entries.record(n) != ArenaSkipList.REMOVED,
                    "key not in the hash index");
            int length = bloomPrefix == null ? -1 : bloomPrefix.applyAsInt(key);
            check(
                    length <= 0 || f.mightContain(BloomFilter.hash(key, length)),
                    "bloom prefix not in the filter");
        }
        check(live == keyCount, "live keys " + live + " != " + keyCount);
        int tombstones = 0;
        Cursor t = tombstoneCursor();
        for (t.seek(Bytes.EMPTY); t.valid(); t.next()) {
            tombstones++;
            int length = t.key().length;
            check(
                    Arrays.stream(tombstoneLengths).anyMatch(l -> l == length),
                    "tombstone length missing");
        }
        check(tombstones == tombstoneCount, "tombstones " + tombstones + " != " + tombstoneCount);
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
