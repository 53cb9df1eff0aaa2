package io.github.flinkstate.disagg.engine.memtable;

import io.github.flinkstate.disagg.engine.key.Bytes;
import io.github.flinkstate.disagg.engine.key.EntryType;
import io.github.flinkstate.disagg.engine.key.Versioned;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The in-memory write buffer: a sorted map from key to its newest entry, plus the prefix tombstones
 * issued while this memtable was active.
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
 *   <li>{@link #approximateBytes()} equals the sum of the per-entry charges.
 *   <li>A frozen memtable is never written.
 * </ol>
 */
public final class Memtable {

    /** Fixed per-entry charge that approximates skip-list and object overhead. */
    static final int ENTRY_OVERHEAD = 64;

    private final long id;
    private final ConcurrentSkipListMap<byte[], Versioned> entries =
            new ConcurrentSkipListMap<>(Bytes::compare);
    private final ConcurrentSkipListMap<byte[], Long> prefixTombstones =
            new ConcurrentSkipListMap<>(Bytes::compare);
    private final Set<Integer> tombstoneLengths = ConcurrentHashMap.newKeySet();
    private final AtomicLong bytes = new AtomicLong();
    private volatile long maxSeq;
    private volatile long minSeq = Long.MAX_VALUE;
    private volatile boolean frozen;

    public Memtable(long id) {
        this.id = id;
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
        NavigableMap<byte[], Versioned> covered = rangeOf(prefix, Bytes.prefixLimit(prefix));
        for (Map.Entry<byte[], Versioned> c : covered.entrySet()) {
            if (entries.remove(c.getKey(), c.getValue())) {
                delta -= charge(c.getKey(), c.getValue());
            }
        }
        bytes.addAndGet(delta);
        noteSeq(seq);
        return delta;
    }

    /** The newest entry for {@code key}, or {@code null}. */
    public Versioned get(byte[] key) {
        return entries.get(key);
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
        long sum = 0;
        for (Map.Entry<byte[], Versioned> e : entries.entrySet()) {
            Versioned v = e.getValue();
            check(EntryType.isValid(v.type()), "bad type " + v.type());
            check(v.seq() >= 1 && v.seq() <= maxSeq, "seq out of range " + v.seq());
            check(
                    coveringTombstoneSeq(e.getKey()) < v.seq(),
                    "entry covered by own tombstone " + Bytes.hex(e.getKey()));
            sum += charge(e.getKey(), v);
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
