package io.github.flinkstate.disagg.engine.cache;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * An in-memory cache of verified data-block payloads, weighted by bytes. Blocks are grouped per
 * file ({@link CachedFile}, one per path, reference-counted by the readers that have the file
 * open), and evicted with the CLOCK (second-chance) policy of the {@link BlockMemory} it draws on.
 * Several caches may draw on one memory (the stores of a task slot): each keeps its own files, disk
 * tier and counters, and all compete for the same bytes in one recency order.
 *
 * <p>Why not a hash map keyed by (file, offset): a point lookup already knows its file and the
 * block's index, so a hit here is one array load plus setting a reference bit, without hashing,
 * allocation or locking. Only misses (which read from the file system anyway) take the lock. CLOCK
 * is also scan-resistant enough for compaction reads: a block read once by a compaction has its
 * reference bit clear and is the first to go, while blocks that point reads keep touching get a
 * second chance.
 *
 * <p>Thread safety: thread-safe. Hits are lock-free; inserts, evictions, opens and releases are
 * serialised on the {@link BlockMemory}. Reference bits are written without synchronisation; a lost
 * update only makes a recently used block slightly more likely to be evicted. Payload arrays handed
 * out are shared and must never be modified.
 *
 * <p>Invariants (checked by {@link #checkInvariants()}):
 *
 * <ol>
 *   <li>Only payloads whose CRC32C was verified are inserted (callers verify before loading).
 *   <li>The memory's clock ring lists exactly the resident blocks: a ring entry (file, block)
 *       exists iff that file's slot holds a payload, and every ring file is open (refs &gt; 0).
 *   <li>{@code usedBytes} is the sum of the weights of this cache's resident blocks (payload length
 *       plus {@link #ENTRY_OVERHEAD}); the memory's total never exceeds its capacity.
 * </ol>
 */
public final class BlockCache {

    /** Approximate per-block bookkeeping charge in bytes (ring slots, array header, slot). */
    public static final int ENTRY_OVERHEAD = BlockMemory.ENTRY_OVERHEAD;

    private final BlockMemory memory;
    private final DiskCache disk;
    private final LongAdder hits = new LongAdder();
    private final LongAdder misses = new LongAdder();
    private final LongAdder joinedLoads = new LongAdder();

    // All fields below are guarded by memory.
    private final Map<String, CachedFile> files = new HashMap<>();
    private long usedBytes;
    private long pinnedBytes;

    /** A cache with a memory of its own of {@code capacityBytes}. */
    public BlockCache(long capacityBytes) {
        this(capacityBytes, null);
    }

    /**
     * A cache with a memory of its own, whose misses are looked up in, and filled into, the local
     * disk tier {@code disk} (null: none). The disk tier stays owned by the caller, who closes it.
     */
    public BlockCache(long capacityBytes, DiskCache disk) {
        this(new BlockMemory(capacityBytes), disk);
    }

    /** A cache drawing on {@code memory}, which other caches may share, over {@code disk}. */
    public BlockCache(BlockMemory memory, DiskCache disk) {
        this.memory = memory;
        this.disk = disk;
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
    public CachedFile open(String file, int blockCount, long[] blockOffsets) {
        synchronized (memory) {
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
    byte[] insert(CachedFile f, int block, byte[] payload) {
        synchronized (memory) {
            return memory.admit(f, block, payload);
        }
    }

    /**
     * Charges the metadata of a file this cache's store opened (index, bloom filter): it takes room
     * from the blocks for as long as the reader is open. Pair with {@link #unpinMetadata}.
     */
    public void pinMetadata(long bytes) {
        synchronized (memory) {
            memory.pin(bytes);
            pinnedBytes += bytes;
        }
    }

    /** Gives back what {@link #pinMetadata} charged. */
    public void unpinMetadata(long bytes) {
        synchronized (memory) {
            memory.unpin(bytes);
            pinnedBytes -= bytes;
        }
    }

    /** Bytes of this cache's open files' metadata charged to the memory. */
    public long pinnedMetadataBytes() {
        synchronized (memory) {
            return pinnedBytes;
        }
    }

    /** Adds {@code weight} (negative: removes) to this cache's resident bytes. REQUIRES: lock. */
    void charge(long weight) {
        usedBytes += weight;
    }

    /** Whether {@code f} is this cache's open table of its file. REQUIRES: lock held. */
    boolean isOpen(CachedFile f) {
        return files.get(f.file()) == f;
    }

    /** Drops one reader's hold on {@code f}; the last release drops its blocks. */
    void release(CachedFile f) {
        synchronized (memory) {
            if (f.refs <= 0) {
                throw new IllegalStateException("cached file " + f.file() + " released too often");
            }
            if (--f.refs > 0) {
                return;
            }
            files.remove(f.file());
            memory.dropAll(f);
        }
    }

    /**
     * Visits this cache's resident data blocks whose file offsets are known (files opened with
     * them: those with a disk tier), file by file; stops when the visitor returns false. Runs under
     * the memory's lock: the visitor must be quick and must not call back into the cache.
     */
    public void visitResidentBlocks(CacheHint.Visitor visitor) {
        synchronized (memory) {
            for (CachedFile f : files.values()) {
                if (f.offsets != null && !f.visitResident(visitor)) {
                    return;
                }
            }
        }
    }

    /** The capacity of the memory this cache draws on (shared with other caches, if any). */
    public long capacityBytes() {
        return memory.capacityBytes();
    }

    /** The memory this cache draws on. */
    public BlockMemory memory() {
        return memory;
    }

    /** The local disk tier under this cache, or null. */
    public DiskCache disk() {
        return disk;
    }

    /** Bytes currently charged to this cache's resident blocks. */
    public long weightedSize() {
        synchronized (memory) {
            return usedBytes;
        }
    }

    /** Number of files with an open block table. */
    public int openFiles() {
        synchronized (memory) {
            return files.size();
        }
    }

    public long hitCount() {
        return hits.sum();
    }

    public long requestCount() {
        return hits.sum() + misses.sum();
    }

    /** Verifies the class invariants; throws {@link IllegalStateException} on violation. */
    public void checkInvariants() {
        synchronized (memory) {
            long sum = 0;
            int resident = 0;
            for (CachedFile f : files.values()) {
                BlockMemory.check(f.refs > 0, "open file " + f.file() + " has no references");
                resident += f.residentBlocks();
                sum += f.residentWeight();
            }
            int entries = memory.ringEntriesOf(this);
            BlockMemory.check(
                    resident == entries,
                    resident + " resident blocks but " + entries + " ring entries");
            BlockMemory.check(sum == usedBytes, "weight accounting " + sum + " != " + usedBytes);
            memory.checkRing();
        }
    }
}
