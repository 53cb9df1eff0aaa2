package io.github.flinkstate.disagg.engine.cache;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * An in-memory cache of verified data-block payloads, weighted by bytes and shareable by any number
 * of stores of one slot. Blocks are grouped per file ({@link CachedFile}, one per path,
 * reference-counted by the readers that have the file open), and evicted with the CLOCK
 * (second-chance) policy.
 *
 * <p>Why not a hash map keyed by (file, offset): a point lookup already knows its file and the
 * block's index, so a hit here is one array load plus setting a reference bit, without hashing,
 * allocation or locking. Only misses (which read from the file system anyway) take the lock. CLOCK
 * is also scan-resistant enough for compaction reads: a block read once by a compaction has its
 * reference bit clear and is the first to go, while blocks that point reads keep touching get a
 * second chance.
 *
 * <p>Thread safety: thread-safe. Hits are lock-free; inserts, evictions, opens and releases are
 * serialised on this object. Reference bits are written without synchronisation; a lost update only
 * makes a recently used block slightly more likely to be evicted. Payload arrays handed out are
 * shared and must never be modified.
 *
 * <p>Invariants (checked by {@link #checkInvariants()}):
 *
 * <ol>
 *   <li>Only payloads whose CRC32C was verified are inserted (callers verify before loading).
 *   <li>The clock ring lists exactly the resident blocks: a ring entry (file, block) exists iff
 *       that file's slot holds a payload, and every ring file is open (refs &gt; 0).
 *   <li>{@code usedBytes} is the sum of the weights of the resident blocks (payload length plus
 *       {@link #ENTRY_OVERHEAD}) and never exceeds the capacity.
 * </ol>
 */
public final class BlockCache {

    /** Approximate per-block bookkeeping charge in bytes (ring slots, array header, slot). */
    public static final int ENTRY_OVERHEAD = 32;

    private final long capacityBytes;
    private final DiskCache disk;
    private final LongAdder hits = new LongAdder();
    private final LongAdder misses = new LongAdder();
    private final LongAdder joinedLoads = new LongAdder();

    // All fields below are guarded by this.
    private final Map<String, CachedFile> files = new HashMap<>();
    private CachedFile[] ringFiles = new CachedFile[256];
    private int[] ringBlocks = new int[256];
    private int ringSize;
    private int hand;
    private long usedBytes;

    public BlockCache(long capacityBytes) {
        this(capacityBytes, null);
    }

    /**
     * A cache whose misses are looked up in, and filled into, the local disk tier {@code disk}
     * (null: none). The disk tier stays owned by the caller, who closes it.
     */
    public BlockCache(long capacityBytes, DiskCache disk) {
        this.disk = disk;
        if (capacityBytes < 0) {
            throw new IllegalArgumentException(
                    "block cache capacity must be >= 0: " + capacityBytes);
        }
        this.capacityBytes = capacityBytes;
    }

    /**
     * Opens the block table of a file (sharing it with other readers of the same path); pair with
     * {@link CachedFile#release()}.
     */
    public CachedFile open(String file, int blockCount) {
        return open(file, blockCount, null);
    }

    /**
     * As {@link #open(String, int)}, with the file offsets of the blocks: a block evicted from
     * memory then refreshes the recency of its copy in the disk tier, so that memory and disk age
     * blocks in one order (a block hot in memory is not the first to leave the disk).
     */
    public synchronized CachedFile open(String file, int blockCount, long[] blockOffsets) {
        CachedFile f = files.get(file);
        if (f == null) {
            f = new CachedFile(this, file, blockCount, blockOffsets);
            files.put(file, f);
        } else if (f.blockCount() != blockCount) {
            throw new IllegalStateException(
                    "file "
                            + file
                            + " opened with "
                            + blockCount
                            + " blocks but cached with "
                            + f.blockCount()
                            + " (files must be immutable)");
        }
        f.refs++;
        return f;
    }

    void recordHit() {
        hits.increment();
    }

    void recordMiss() {
        misses.increment();
    }

    void recordJoinedLoad() {
        joinedLoads.increment();
    }

    /**
     * Misses that waited for a load of the same block already in flight instead of reading it
     * themselves (see {@link CachedFile#get}).
     */
    public long joinedLoadCount() {
        return joinedLoads.sum();
    }

    /** Makes {@code payload} resident (evicting as needed) and returns the resident copy. */
    synchronized byte[] insert(CachedFile f, int block, byte[] payload) {
        byte[] present = f.slot(block);
        if (present != null) {
            return present;
        }
        long weight = weight(payload);
        if (f.refs == 0 || weight > capacityBytes) {
            return payload;
        }
        while (usedBytes + weight > capacityBytes) {
            evictOne();
        }
        if (ringSize == ringFiles.length) {
            ringFiles = Arrays.copyOf(ringFiles, ringSize * 2);
            ringBlocks = Arrays.copyOf(ringBlocks, ringSize * 2);
        }
        ringFiles[ringSize] = f;
        ringBlocks[ringSize] = block;
        ringSize++;
        usedBytes += weight;
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
                if (disk != null && f.offsets != null) {
                    disk.touch(f.file(), f.offsets[block]); // lock order: memory, then disk
                }
                removeRingEntry(hand);
                return;
            }
        }
    }

    /** Drops ring entry {@code i} and its payload; the last entry moves into its place. */
    private void removeRingEntry(int i) {
        CachedFile f = ringFiles[i];
        int block = ringBlocks[i];
        usedBytes -= weight(f.slot(block));
        f.setSlot(block, null);
        ringSize--;
        ringFiles[i] = ringFiles[ringSize];
        ringBlocks[i] = ringBlocks[ringSize];
        ringFiles[ringSize] = null;
    }

    /** Drops one reader's hold on {@code f}; the last release drops its blocks. */
    synchronized void release(CachedFile f) {
        if (f.refs <= 0) {
            throw new IllegalStateException("cached file " + f.file() + " released too often");
        }
        if (--f.refs > 0) {
            return;
        }
        files.remove(f.file());
        for (int i = ringSize - 1; i >= 0; i--) {
            if (ringFiles[i] == f) {
                removeRingEntry(i);
            }
        }
    }

    private static long weight(byte[] payload) {
        return (long) payload.length + ENTRY_OVERHEAD;
    }

    public long capacityBytes() {
        return capacityBytes;
    }

    /** The local disk tier under this cache, or null. */
    public DiskCache disk() {
        return disk;
    }

    /** Bytes currently charged to resident blocks. */
    public synchronized long weightedSize() {
        return usedBytes;
    }

    /** Number of files with an open block table. */
    public synchronized int openFiles() {
        return files.size();
    }

    public long hitCount() {
        return hits.sum();
    }

    public long requestCount() {
        return hits.sum() + misses.sum();
    }

    /** Verifies the class invariants; throws {@link IllegalStateException} on violation. */
    public synchronized void checkInvariants() {
        long sum = 0;
        int resident = 0;
        for (CachedFile f : files.values()) {
            check(f.refs > 0, "open file " + f.file() + " has no references");
            resident += f.residentBlocks();
        }
        for (int i = 0; i < ringSize; i++) {
            CachedFile f = ringFiles[i];
            check(files.get(f.file()) == f, "ring lists a block of closed file " + f.file());
            byte[] payload = f.slot(ringBlocks[i]);
            check(payload != null, "ring lists an empty slot of " + f.file());
            sum += weight(payload);
        }
        check(
                resident == ringSize,
                resident + " resident blocks but " + ringSize + " ring entries");
        check(sum == usedBytes, "weight accounting " + sum + " != " + usedBytes);
        check(
                usedBytes <= capacityBytes,
                "block cache weight " + usedBytes + " > " + capacityBytes);
    }

    private static void check(boolean ok, String msg) {
        if (!ok) {
            throw new IllegalStateException("BlockCache invariant violated: " + msg);
        }
    }
}
