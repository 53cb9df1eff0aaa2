package io.github.flinkstate.disagg.engine.cache;

import io.github.flinkstate.disagg.engine.key.EntryType;
import io.github.flinkstate.disagg.engine.key.Versioned;
import java.util.Arrays;

/**
 * One store's cache of point-lookup results from its files: for a key, what its files show, prefix
 * tombstones applied (the newest put, or {@link #ABSENT} for a delete, nothing, or a covered put).
 * A hit costs a hash-table probe instead of the bloom probes, index searches and block searches of
 * every level.
 *
 * <p>What a cached row stays valid through: compactions that drop nothing (they keep the newest
 * entry of every key), moves of files and new prefix tombstones in memtables (the reader still
 * applies every tombstone newer than the row). What makes it stale, and how the store forgets it:
 *
 * <ul>
 *   <li>a flush that brings a newer entry of the key into the files: the store calls {@link
 *       #invalidate} for every key of the memtable before the flushed file becomes visible (until
 *       then the memtable answers first);
 *   <li>a flush that brings a prefix tombstone into the files (a compaction may later drop it with
 *       the entries it covers, and the row would then be the only trace): {@link #invalidateAll};
 *   <li>a compaction whose filter dropped entries (TTL): {@link #invalidateAll}.
 * </ul>
 *
 * A lookup that ran while any of these happened must not store its result: callers read {@link
 * #generation()} before they pin their read view and pass it to {@link #put}, which stores nothing
 * when an invalidation came in between.
 *
 * <p>Layout: an 8-way set-associative table (hash, {@link RowRecord} with the key and row, a
 * referenced bit for a CLOCK choice of the victim within a set), grown by doubling at three
 * quarters full. A hit decodes the record into a new {@link Versioned} (a copy of the value).
 *
 * <p>Admission: while the rows' memory has room, every lookup result is stored. Once a row could
 * not be charged (the cache is full, until it can charge more memory), a new key that does not fit
 * in what the cache has charged (room invalidations left) is stored only on its second miss within
 * a fixed (not sliding) window (a doorkeeper: one bit per hash in a bit set of 2 bits per slot,
 * cleared after a sixteenth of a table's worth of first misses). Without it a full cache under
 * reads spread evenly over more keys than it holds replaced a row on every miss, and paid the copy,
 * the probe and the eviction for a hit rate no better than keeping its rows; a key read again soon
 * (a hot key) still gets in. The price: a key read less often than that rarely replaces a cold row
 * of a full cache (only through a bit another key set).
 *
 * <p>Memory: every row is charged with its record's length and {@link #ROW_OVERHEAD}, the table
 * with {@link #SLOT_BYTES} per slot, to the {@link BlockMemory} in steps of {@link #CHARGE_STEP},
 * and only out of memory the blocks leave free, within the rows' share. When blocks need the memory
 * back, the block memory records a debt; the next lookup or invalidation of a row cache on it pays
 * (the first to come pays all it can) by dropping rows (a CLOCK sweep: rows read since the last
 * sweep get a second chance), or, when what is left would not hold twice its table, all of them,
 * with the table replaced by a small uncharged one. A row cache that cannot charge more makes room
 * for a new row by the same sweep.
 *
 * <p>Thread safety: thread-safe; every method but {@link #generation()} (a volatile read) takes
 * this object's monitor: the store's point reads come from its task thread, so it is contended only
 * by the flush and compaction threads' invalidations and by metric reporters reading the counters.
 * Lock order: this, then the {@link BlockMemory}.
 */
public final class RowCache implements AutoCloseable {

    /** Stored for a key the files do not hold. */
    public static final Versioned ABSENT = new Versioned(-1, EntryType.DELETE, null);

    /** Bytes charged per row beyond its record's length (the array's header and padding). */
    static final int ROW_OVERHEAD = 24;

    /** Bytes of table per slot: hash, record reference, referenced bit, 2 doorkeeper bits. */
    static final int SLOT_BYTES = 14;

    /** The granularity in which the cache charges and gives back memory. */
    static final long CHARGE_STEP = 64 << 10;

    private static final int WAYS = 8;

    /**
     * The doorkeeper's window is {@code slots / DOORKEEPER_WINDOW_DIVISOR} first misses: a key gets
     * into a full cache if it misses twice within it. With map reads spread evenly over about twice
     * the keys a full cache held (docs/disaggregated.md, "Row cache admission"), a window of half
     * the slots let enough second misses in that the rows gained nothing over no rows; a sixteenth
     * is a choice (short enough that such reads rarely repeat within it), not a measured optimum.
     */
    static final int DOORKEEPER_WINDOW_DIVISOR = 16;

    private static final int INITIAL_SETS = 64;

    private final BlockMemory memory;
    private final long largestRow;

    // all guarded by this
    private long[] hashes;
    private byte[][] records;
    private boolean[] referenced;
    private int setMask;
    private int count;

    /**
     * Set when a new row could not be charged; cleared when more memory could be (not when the row
     * fit in what a replaced row left) and when every row is dropped at once. While set, a row that
     * fits in what is charged (room that invalidations left) is still stored. See admission above.
     */
    private boolean full;

    /** The doorkeeper: a bit per hash of a key missed once in the current window. */
    private long[] seen;

    /** First misses recorded in {@link #seen} since it was last cleared. */
    private int seenCount;

    /** The rows' weights plus the table's bytes; 0 exactly while the table is not charged. */
    private long bytes;

    /** Bytes charged to the block memory (whole steps), at least {@code bytes}. */
    private long charged;

    private volatile long generation; // written under this, read without it
    private long hits;
    private long requests;
    private boolean closed;

    /** Where the next sweep that drops rows (to pay a debt, or for a new row) starts. */
    private int sweepHand;

    /** Bytes given back to the block memory because blocks needed them. */
    private long bytesYielded;

    private RowCache(BlockMemory memory) {
        this.memory = memory;
        this.largestRow = Math.max(1024, memory.rowCapacityBytes() / 256);
        allocate(INITIAL_SETS);
    }

    /**
     * A row cache on {@code memory}, or null when its share for rows is below two {@link
     * #CHARGE_STEP}s (0 included): too small to hold anything.
     */
    public static RowCache on(BlockMemory memory) {
        return memory.rowCapacityBytes() >= 2 * CHARGE_STEP ? new RowCache(memory) : null;
    }

    /** Read before pinning a read view; pass it to {@link #put} with that view's result. */
    public long generation() {
        return generation;
    }

    /** The cached entry of {@code key}, {@link #ABSENT}, or null when nothing is cached. */
    public synchronized Versioned get(byte[] key, long hash) {
        payIfOwed();
        requests++;
        int slot = find(key, hash);
        if (slot < 0) {
            return null;
        }
        referenced[slot] = true;
        hits++;
        return RowRecord.decode(records[slot]);
    }

    /**
     * Caches what the files hold for {@code key} ({@link #ABSENT} for nothing), unless an
     * invalidation happened since {@code generationBefore} was read, the cache is full and this is
     * the key's first miss in the doorkeeper's window (see admission above), or the rows' memory is
     * used up and the key's set has nothing to replace. Copies {@code key}.
     */
    public synchronized void put(byte[] key, long hash, Versioned row, long generationBefore) {
        if (closed || generationBefore != generation) {
            return;
        }
        payIfOwed();
        long weight = weight(RowRecord.length(key, row));
        if (weight > largestRow) {
            return;
        }
        if (bytes == 0) { // the table is charged with the first row that finds room
            if (!charge(tableBytes())) {
                return;
            }
            bytes = tableBytes();
        }
        int slot = find(key, hash); // a key held is replaced, admitted or not
        if (slot >= 0) {
            remove(slot);
        } else if (full && bytes + weight > charged && !secondMiss(hash)) {
            // full, and no room left by invalidations in what is charged: a first miss stays out
            return;
        } else if (count + 1 > capacity() * 3 / 4) {
            grow();
        }
        int base = setOf(hash);
        slot = freeOrVictim(base);
        if (records[slot] != null) {
            remove(slot);
        }
        if (!charge(bytes + weight)) {
            full = true;
            sweepTo(charged - weight); // no more memory: the row replaces others
            if (bytes + weight > charged) {
                return;
            }
        }
        hashes[slot] = hash;
        records[slot] = RowRecord.encode(key, row);
        referenced[slot] = false;
        bytes += weight;
        count++;
    }

    /** Forgets {@code key}; lookups that started before do not store their result. */
    public synchronized void invalidate(byte[] key, long hash) {
        generation++;
        payIfOwed(); // the flush thread pays for a store whose task thread reads nothing
        int slot = find(key, hash);
        if (slot >= 0) {
            remove(slot);
            release();
        }
    }

    /** Forgets every row; lookups that started before do not store their result. */
    public synchronized void invalidateAll() {
        generation++;
        payIfOwed();
        full = false;
        if (count > 0) {
            Arrays.fill(records, null);
            Arrays.fill(referenced, false);
            bytes = tableBytes();
            count = 0;
            release();
        }
    }

    /** Rows held. */
    public synchronized int size() {
        return count;
    }

    /** Bytes charged to the block memory for this cache (a multiple of {@link #CHARGE_STEP}). */
    public synchronized long chargedBytes() {
        return charged;
    }

    /** Bytes this cache gave back because blocks or file metadata needed them. */
    public synchronized long bytesYielded() {
        return bytesYielded;
    }

    public synchronized long hitCount() {
        return hits;
    }

    public synchronized long requestCount() {
        return requests;
    }

    /** Drops every row and gives its memory back; later puts store nothing. Idempotent. */
    @Override
    public synchronized void close() {
        closed = true;
        generation++;
        reset();
    }

    /** Checks counts and charges against the table. */
    public synchronized void checkInvariants() {
        long sum = bytes > 0 ? tableBytes() : 0;
        int n = 0;
        for (int i = 0; i < records.length; i++) {
            if (records[i] != null) {
                n++;
                sum += weight(records[i]);
                BlockMemory.check(
                        find(RowRecord.key(records[i]), hashes[i]) == i,
                        "row cache slot " + i + " not found");
            } else {
                BlockMemory.check(!referenced[i], "empty row cache slot " + i + " referenced");
            }
        }
        BlockMemory.check(
                (long) seen.length * 32 == capacity()
                        && seenCount < capacity() / DOORKEEPER_WINDOW_DIVISOR,
                "row cache doorkeeper of " + seen.length + " words, " + seenCount + " misses");
        BlockMemory.check(n == count, "row cache count " + n + " != " + count);
        BlockMemory.check(sum == bytes, "row cache bytes " + sum + " != " + bytes);
        BlockMemory.check(
                bytes <= charged && charged % CHARGE_STEP == 0,
                "row cache charged " + charged + " for " + bytes);
        BlockMemory.check(!closed || charged == 0, "closed row cache still charged " + charged);
        memory.checkRows();
    }

    // ------------------------------------------------------------------ internals

    /** Gives back this cache's part of the rows' debt, dropping rows to fit what is left. */
    private void payDebt() {
        if (charged == 0) {
            return;
        }
        long give = memory.claimRowDebt(charged, CHARGE_STEP);
        if (give == 0) {
            return;
        }
        charged -= give;
        bytesYielded += give;
        if (bytes > 0 && charged < 2 * tableBytes()) {
            bytesYielded += charged;
            reset(); // too little left for the table to be worth its memory
            return;
        }
        sweepTo(charged);
    }

    /**
     * Drops every row and the table for a new small one, uncharged, and gives back every step: both
     * are charged again by the next row that finds room. REQUIRES: lock held.
     */
    private void reset() {
        allocate(INITIAL_SETS);
        count = 0;
        bytes = 0;
        if (charged > 0) {
            memory.unpinRows(charged);
            charged = 0;
        }
    }

    /**
     * Drops rows until they and the table take at most {@code target} bytes (or none is left): a
     * CLOCK sweep over the table, in which a row read since the last sweep passed it is kept once.
     */
    private void sweepTo(long target) {
        int n = records.length;
        for (int scanned = 0; bytes > target && count > 0 && scanned < 2 * n; scanned++) {
            int i = sweepHand;
            sweepHand = (sweepHand + 1) & (n - 1);
            if (records[i] != null) {
                if (referenced[i]) {
                    referenced[i] = false;
                } else {
                    remove(i);
                }
            }
        }
    }

    private int find(byte[] key, long hash) {
        int base = setOf(hash);
        for (int i = base; i < base + WAYS; i++) {
            // the hash first: a miss then reads only the set's hashes, not its records
            if (hashes[i] == hash && records[i] != null && RowRecord.hasKey(records[i], key)) {
                return i;
            }
        }
        return -1;
    }

    /** An empty slot of the set at {@code base}, else the first not referenced since last asked. */
    private int freeOrVictim(int base) {
        for (int i = base; i < base + WAYS; i++) {
            if (records[i] == null) {
                return i;
            }
        }
        for (int round = 0; round < 2; round++) {
            for (int i = base; i < base + WAYS; i++) {
                if (!referenced[i]) {
                    return i;
                }
                referenced[i] = false;
            }
        }
        return base; // unreachable: the first round cleared every bit
    }

    private void remove(int slot) {
        bytes -= weight(records[slot]);
        records[slot] = null;
        referenced[slot] = false;
        count--;
    }

    /** Doubles the table when its memory can be charged; rows that find no room are dropped. */
    private void grow() {
        int sets = setMask + 1;
        if (sets >= (1 << 26) / WAYS) {
            return;
        }
        long extra = tableBytes(sets * 2) - tableBytes(sets);
        if (!charge(bytes + extra)) {
            return;
        }
        long[] oldHashes = hashes;
        byte[][] oldRecords = records;
        boolean wasFull = full; // a table grown out of the slack makes no room for rows
        allocate(sets * 2);
        full = wasFull;
        bytes = tableBytes(sets * 2);
        count = 0;
        for (int i = 0; i < oldRecords.length; i++) {
            if (oldRecords[i] != null) {
                int base = setOf(oldHashes[i]);
                for (int s = base; s < base + WAYS; s++) {
                    if (records[s] == null) {
                        hashes[s] = oldHashes[i];
                        records[s] = oldRecords[i];
                        bytes += weight(oldRecords[i]);
                        count++;
                        break;
                    }
                }
            }
        }
        release();
    }

    private void allocate(int sets) {
        sweepHand = 0;
        full = false;
        seen = new long[sets * WAYS / 32]; // 2 bits per slot
        seenCount = 0;
        hashes = new long[sets * WAYS];
        records = new byte[sets * WAYS][];
        referenced = new boolean[sets * WAYS];
        setMask = sets - 1;
    }

    /** Makes the charge cover {@code needed} bytes; false when the rows' share has no room. */
    private boolean charge(long needed) {
        while (charged < needed) {
            if (!memory.tryPinRows(CHARGE_STEP)) {
                return false;
            }
            charged += CHARGE_STEP;
            full = false; // the rows' memory had room after all
        }
        return true;
    }

    /**
     * Whether {@code hash} missed before within the doorkeeper's window; records it if not, and
     * starts a new window after {@code 1 / DOORKEEPER_WINDOW_DIVISOR} of a table's worth of first
     * misses.
     */
    private boolean secondMiss(long hash) {
        int bits = seen.length * 64;
        int bit = (int) ((hash * 0xC2B2AE3D27D4EB4FL) >>> 32) & (bits - 1);
        long mask = 1L << bit;
        int word = bit >>> 6;
        if ((seen[word] & mask) != 0) {
            return true;
        }
        seen[word] |= mask;
        if (++seenCount >= capacity() / DOORKEEPER_WINDOW_DIVISOR) {
            Arrays.fill(seen, 0);
            seenCount = 0;
        }
        return false;
    }

    /** Gives back whole steps no longer needed, keeping up to two steps of slack. */
    private void release() {
        while (charged - bytes > 2 * CHARGE_STEP) {
            memory.unpinRows(CHARGE_STEP);
            charged -= CHARGE_STEP;
        }
    }

    /** If the rows owe the block memory anything, pays this cache's part. */
    private void payIfOwed() {
        if (memory.rowsOwe()) {
            payDebt();
        }
    }

    /** The first slot of the set of {@code hash}. */
    private int setOf(long hash) {
        return (mix(hash) & setMask) * WAYS;
    }

    private long tableBytes() {
        return tableBytes(setMask + 1);
    }

    private int capacity() {
        return (setMask + 1) * WAYS;
    }

    private static long tableBytes(int sets) {
        return (long) sets * WAYS * SLOT_BYTES;
    }

    private static long weight(byte[] record) {
        return weight(record.length);
    }

    private static long weight(int recordLength) {
        return recordLength + (long) ROW_OVERHEAD;
    }

    private static int mix(long hash) {
        long h = hash * 0x9E3779B97F4A7C15L;
        return (int) (h >>> 32);
    }
}
