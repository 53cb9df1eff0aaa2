package io.github.flinkstate.disagg.engine.cache;

import java.util.Arrays;

/**
 * The memory behind one or several {@link BlockCache}s: a byte budget and one CLOCK (second-chance)
 * ring over the resident blocks of all of them, so that the stores of a task slot share one budget
 * and one recency order. A store that reads more takes memory from the others' cold blocks; none
 * has a fixed share.
 *
 * <p>Each {@link BlockCache} in front of this memory keeps its own file tables, disk tier and
 * counters; this class decides which block leaves when another one enters, and keeps the accounts
 * of metadata and rows.
 *
 * <p>Thread safety: thread-safe; this object is the lock of every {@link BlockCache} built on it
 * (opens, inserts, evictions and releases of all of them serialise here; hits take no lock).
 *
 * <p>The metadata of open files (index, bloom filter) is charged here too ({@link #pin}): it is not
 * evicted; rows, then blocks, make room for it.
 *
 * <p>The stores' {@link RowCache}s live on the memory the blocks leave free: a row cache charges
 * memory ({@link #tryPinRows}) only when it is free and within {@code rowCapacityBytes} for all of
 * them together; a block or metadata that needs room takes it from the rows first, as a debt
 * ({@code rowDebt}) that the row caches pay at their next lookup, store or invalidation by dropping
 * rows ({@link #claimRowDebt}), and only then evicts blocks. A debt no longer needed (blocks or
 * metadata released meanwhile) is forgiven. So rows never cost the blocks memory: they hold what
 * the blocks do not need, and the total exceeds the capacity at most by the debt not yet paid.
 *
 * <p>Invariants (checked by {@link BlockCache#checkInvariants()}): the ring lists exactly the
 * resident blocks of the caches on this memory, {@code usedBytes} is the sum of their weights, and
 * blocks, pinned metadata and the rows not owed together never exceed {@code capacityBytes} while
 * any block is resident; {@code 0 <= rowDebt <= rowBytes <= rowCapacityBytes}.
 */
public final class BlockMemory {

    /** Approximate per-block bookkeeping charge in bytes (ring slots, array header, slot). */
    public static final int ENTRY_OVERHEAD = 32;

    private final long capacityBytes;
    private final long rowCapacityBytes;

    // All fields below are guarded by this (rowDebt is also read without it).
    private CachedFile[] ringFiles = new CachedFile[256];
    private int[] ringBlocks = new int[256];
    private int ringSize;
    private int hand;
    private long usedBytes;

    /** Bytes of open files' metadata, charged with {@link #pin}. */
    private long pinnedBytes;

    /** Bytes the row caches on this memory are charged ({@link #tryPinRows}). */
    private long rowBytes;

    /**
     * Part of {@code rowBytes} that blocks or metadata took and the row caches must give back;
     * volatile so that row caches can check it at every lookup without the lock.
     */
    private volatile long rowDebt;

    /** A memory without row caches. */
    public BlockMemory(long capacityBytes) {
        this(capacityBytes, 0);
    }

    /**
     * @param rowShare the part of {@code capacityBytes} that the row caches of all stores on this
     *     memory may take together, 0 for none
     */
    public BlockMemory(long capacityBytes, double rowShare) {
        if (capacityBytes < 0) {
            throw new IllegalArgumentException(
                    "block cache capacity must be >= 0: " + capacityBytes);
        }
        if (!(rowShare >= 0 && rowShare <= 1)) {
            throw new IllegalArgumentException("row cache share must be in [0, 1]: " + rowShare);
        }
        this.capacityBytes = capacityBytes;
        this.rowCapacityBytes = (long) (capacityBytes * rowShare);
    }

    public long capacityBytes() {
        return capacityBytes;
    }

    /** Bytes charged to resident blocks of all caches on this memory. */
    public synchronized long usedBytes() {
        return usedBytes;
    }

    /**
     * Bytes no block, metadata or row (not owed) holds: what can be taken without evicting
     * anything; 0 if none.
     */
    public synchronized long freeBytes() {
        return Math.max(0, capacityBytes - usedBytes - pinnedBytes - (rowBytes - rowDebt));
    }

    /** Bytes charged to open files' metadata ({@link #pin}). */
    public synchronized long pinnedBytes() {
        return pinnedBytes;
    }

    /** What the row caches on this memory may hold together; 0 when they are off. */
    public long rowCapacityBytes() {
        return rowCapacityBytes;
    }

    /** Bytes the row caches on this memory are charged, what they owe included. */
    public synchronized long rowBytes() {
        return rowBytes;
    }

    /** Bytes the row caches owe: taken by blocks or metadata, not yet given back. */
    public synchronized long rowDebt() {
        return rowDebt;
    }

    /** Whether the row caches owe memory; a read without the lock, for their lookups. */
    boolean rowsOwe() {
        return rowDebt > 0;
    }

    /**
     * Charges {@code bytes} to a row cache when they are free (no block, metadata or other row,
     * owed ones included, holds them) and the rows' share has room for them; false (nothing
     * charged) otherwise. Never evicts.
     */
    synchronized boolean tryPinRows(long bytes) {
        if (rowBytes + bytes > rowCapacityBytes
                || usedBytes + pinnedBytes + rowBytes + bytes > capacityBytes) {
            return false;
        }
        rowBytes += bytes;
        return true;
    }

    /** Gives back what {@link #tryPinRows} charged; what the rows owe shrinks by as much. */
    synchronized void unpinRows(long bytes) {
        rowBytes -= bytes;
        rowDebt = Math.max(0, rowDebt - bytes);
    }

    /**
     * Settles up to {@code chargedBytes} (what the calling row cache is charged) of the rows' debt,
     * rounded up to whole {@code step}s: the caller is charged the returned number of bytes less
     * and must drop rows to fit.
     */
    synchronized long claimRowDebt(long chargedBytes, long step) {
        if (rowDebt == 0) {
            return 0;
        }
        long give = Math.min(chargedBytes, (rowDebt + step - 1) / step * step);
        rowBytes -= give;
        rowDebt = Math.max(0, rowDebt - give);
        return give;
    }

    /**
     * Charges {@code bytes} of metadata that stay in memory while a reader is open, taking the room
     * from rows, then blocks. Metadata is never evicted (readers are bounded by count, and they
     * close when their files do): when it alone exceeds the capacity, no block stays cached.
     */
    synchronized void pin(long bytes) {
        pinnedBytes += bytes;
        makeRoom(0);
    }

    /**
     * Makes {@code bytes} more fit beside the blocks, metadata and rows not owed: first by making
     * the rows owe what they hold, then by evicting blocks. REQUIRES: lock held.
     */
    private void makeRoom(long bytes) {
        long over = usedBytes + pinnedBytes + (rowBytes - rowDebt) + bytes - capacityBytes;
        if (over > 0 && rowBytes > rowDebt) {
            long take = Math.min(over, rowBytes - rowDebt);
            rowDebt = rowDebt + take;
            over -= take;
        }
        while (over > 0 && ringSize > 0) {
            long before = usedBytes;
            evictOne();
            over -= before - usedBytes;
        }
    }

    /** Gives back what {@link #pin} charged. */
    synchronized void unpin(long bytes) {
        pinnedBytes -= bytes;
        forgiveRowDebt();
    }

    /** Lowers the rows' debt to what still exceeds the capacity. REQUIRES: lock held. */
    private void forgiveRowDebt() {
        if (rowDebt > 0) {
            long over = usedBytes + pinnedBytes + rowBytes - capacityBytes;
            rowDebt = Math.min(rowDebt, Math.max(0, over));
        }
    }

    static long weight(byte[] payload) {
        return (long) payload.length + ENTRY_OVERHEAD;
    }

    /**
     * Makes {@code payload} resident as block {@code block} of {@code f} (evicting as needed) and
     * returns the resident copy, or the argument itself when it is not cached. REQUIRES: lock held.
     */
    byte[] admit(CachedFile f, int block, byte[] payload) {
        byte[] present = f.slot(block);
        if (present != null) {
            return present;
        }
        long weight = weight(payload);
        if (f.refs == 0 || weight + pinnedBytes > capacityBytes) {
            return payload;
        }
        makeRoom(weight);
        if (ringSize == ringFiles.length) {
            ringFiles = Arrays.copyOf(ringFiles, ringSize * 2);
            ringBlocks = Arrays.copyOf(ringBlocks, ringSize * 2);
        }
        ringFiles[ringSize] = f;
        ringBlocks[ringSize] = block;
        ringSize++;
        usedBytes += weight;
        f.owner().charge(weight);
        f.setSlot(block, payload);
        return payload;
    }

    /** Advances the clock hand until one block is evicted. REQUIRES: lock held, ring not empty. */
    private void evictOne() {
        while (true) {
            if (hand >= ringSize) {
                hand = 0;
            }
            CachedFile f = ringFiles[hand];
            int block = ringBlocks[hand];
            if (f.takeReference(block)) {
                hand++;
            } else {
                DiskCache disk = f.owner().disk();
                if (disk != null && f.offsets != null) {
                    disk.touch(f.file(), f.offsets[block]); // lock order: memory, then disk
                }
                removeRingEntry(hand);
                return;
            }
        }
    }

    /** Drops every resident block of {@code f}. REQUIRES: lock held. */
    void dropAll(CachedFile f) {
        for (int i = ringSize - 1; i >= 0; i--) {
            if (ringFiles[i] == f) {
                removeRingEntry(i);
            }
        }
        forgiveRowDebt();
    }

    /** Drops ring entry {@code i} and its payload; the last entry moves into its place. */
    private void removeRingEntry(int i) {
        CachedFile f = ringFiles[i];
        int block = ringBlocks[i];
        long weight = weight(f.slot(block));
        usedBytes -= weight;
        f.owner().charge(-weight);
        f.setSlot(block, null);
        ringSize--;
        ringFiles[i] = ringFiles[ringSize];
        ringBlocks[i] = ringBlocks[ringSize];
        ringFiles[ringSize] = null;
    }

    /** Checks the ring against the caches' file tables. REQUIRES: lock held. */
    void checkRing() {
        long sum = 0;
        for (int i = 0; i < ringSize; i++) {
            CachedFile f = ringFiles[i];
            check(f.refs > 0 && f.owner().isOpen(f), "ring lists a block of closed " + f.file());
            byte[] payload = f.slot(ringBlocks[i]);
            check(payload != null, "ring lists an empty slot of " + f.file());
            sum += weight(payload);
        }
        check(sum == usedBytes, "weight accounting " + sum + " != " + usedBytes);
        check(pinnedBytes >= 0, "pinned bytes " + pinnedBytes + " < 0");
        checkRows();
        check(
                (usedBytes == 0 && rowBytes == rowDebt)
                        || usedBytes + pinnedBytes + rowBytes - rowDebt <= capacityBytes,
                "block memory "
                        + usedBytes
                        + " + pinned "
                        + pinnedBytes
                        + " + rows not owed "
                        + (rowBytes - rowDebt)
                        + " > "
                        + capacityBytes);
    }

    /** Checks the rows' accounts: {@code 0 <= rowDebt <= rowBytes <= rowCapacityBytes}. */
    synchronized void checkRows() {
        check(
                0 <= rowDebt && rowDebt <= rowBytes && rowBytes <= rowCapacityBytes,
                "row debt " + rowDebt + ", row bytes " + rowBytes + ", share " + rowCapacityBytes);
    }

    /** Ring entries of files of {@code cache}. REQUIRES: lock held. */
    int ringEntriesOf(BlockCache cache) {
        int n = 0;
        for (int i = 0; i < ringSize; i++) {
            if (ringFiles[i].owner() == cache) {
                n++;
            }
        }
        return n;
    }

    static void check(boolean ok, String msg) {
        if (!ok) {
            throw new IllegalStateException("BlockCache invariant violated: " + msg);
        }
    }
}
