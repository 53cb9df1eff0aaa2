package io.github.flinkstate.disagg.engine.cache;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The cached blocks of one file in a {@link BlockCache}: one slot and one CLOCK reference bit per
 * data block, addressed by block index. A read calls {@link #lookup} and, on a miss, reads and
 * verifies the block and hands it to {@link #insert}. Obtained from {@link BlockCache#open} by each
 * reader of the file and released when the reader closes; the last release drops the file's blocks.
 *
 * <p>{@link #get} combines the two and deduplicates concurrent misses: when several threads miss
 * the same block at once, one of them loads it (one read of the file) and the others wait for its
 * result; a failed load fails the threads waiting for it (unless it failed only because the
 * loader's thread was interrupted: they then read the block themselves) and is forgotten, so the
 * next miss retries.
 *
 * <p>Thread safety: thread-safe. {@link #lookup} is lock-free; slots are only written by the owning
 * cache under its memory's lock. After the final release, {@link #lookup} still works, but {@link
 * #insert} no longer caches anything (a reader evicted while an iterator still uses it keeps
 * working); loads are still deduplicated.
 */
public final class CachedFile {

    private final BlockCache cache;
    private final String file;
    private final AtomicReferenceArray<byte[]> slots;
    private final byte[] referenced;

    /** Loads in flight by block index; an entry exists only while its load runs. */
    private final ConcurrentHashMap<Integer, CompletableFuture<byte[]>> loading =
            new ConcurrentHashMap<>();

    /** Readers holding this file open; guarded by the cache's memory. */
    int refs;

    /** Offsets of the blocks in the file, or null if unknown; for the disk tier's recency. */
    final long[] offsets;

    CachedFile(BlockCache cache, String file, int blockCount, long[] offsets) {
        this.cache = cache;
        this.file = file;
        this.offsets = offsets;
        this.slots = new AtomicReferenceArray<>(blockCount);
        this.referenced = new byte[blockCount];
    }

    public String file() {
        return file;
    }

    /** The local disk tier under the cache, or null. */
    public DiskCache disk() {
        return cache.disk();
    }

    public int blockCount() {
        return slots.length();
    }

    /** The resident payload of block {@code block} (marking it used), or null on a miss. */
    public byte[] lookup(int block) {
        byte[] payload = slots.get(block);
        if (payload != null) {
            if (referenced[block] == 0) {
                referenced[block] = 1;
            }
            cache.recordHit();
            return payload;
        }
        cache.recordMiss();
        return null;
    }

    /**
     * The resident payload of block {@code block}, or null; unlike {@link #lookup} it neither marks
     * the block used nor counts a hit or miss (for reads that must not keep blocks cached, such as
     * a compaction's reads of its inputs).
     */
    public byte[] peek(int block) {
        return slots.get(block);
    }

    /**
     * Caches a verified payload read after a {@link #lookup} miss and returns the resident copy
     * (another reader's, if it won the race; the argument itself if it is not cached).
     */
    public byte[] insert(int block, byte[] payload) {
        return cache.insert(this, block, payload);
    }

    /** Reads a block after a cache miss; returns a verified payload. */
    @FunctionalInterface
    public interface Loader {
        byte[] load(int block) throws IOException;
    }

    /**
     * The payload of {@code block}: from the cache, or loaded with {@code loader} and inserted. Of
     * concurrent misses of the same block only one calls the loader; the others wait for its result
     * or its exception, unless that only says that the loader's thread was interrupted: then they
     * read the block themselves, joining no other load.
     */
    public byte[] get(int block, Loader loader) throws IOException {
        boolean joinedAnInterruptedLoad = false;
        while (true) {
            byte[] payload = lookup(block);
            if (payload != null) {
                return payload;
            }
            CompletableFuture<byte[]> mine = new CompletableFuture<>();
            CompletableFuture<byte[]> running = loading.putIfAbsent(block, mine);
            if (running == null) {
                return load(block, loader, mine);
            }
            if (joinedAnInterruptedLoad) { // its own read: another load may fail the same way
                payload = slots.get(block);
                return payload != null ? payload : insert(block, loader.load(block));
            }
            cache.recordJoinedLoad();
            payload = InFlight.awaitUnlessInterruptedElsewhere(running, "a read");
            if (payload != null) {
                return payload;
            }
            joinedAnInterruptedLoad = true; // the loader's thread was interrupted, not this one
        }
    }

    private byte[] load(int block, Loader loader, CompletableFuture<byte[]> mine)
            throws IOException {
        byte[] payload;
        try {
            payload = slots.get(block); // a load may have finished since our lookup
            if (payload == null) {
                payload = insert(block, loader.load(block));
            }
            // no longer in flight before waiters wake: one that loads again must not find it
            loading.remove(block, mine);
            mine.complete(payload);
            return payload;
        } catch (Throwable t) {
            loading.remove(block, mine);
            mine.completeExceptionally(t);
            throw t;
        }
    }

    /** Gives up this reader's hold; call once per {@link BlockCache#open}. */
    public void release() {
        cache.release(this);
    }

    byte[] slot(int block) {
        return slots.get(block);
    }

    void setSlot(int block, byte[] payload) {
        referenced[block] = 0;
        slots.set(block, payload);
    }

    /** Clears the reference bit of a block and says whether it was set (the second chance). */
    boolean takeReference(int block) {
        if (referenced[block] == 0) {
            return false;
        }
        referenced[block] = 0;
        return true;
    }

    /** The cache this table belongs to. */
    BlockCache owner() {
        return cache;
    }

    /** Sum of the weights of the resident blocks. */
    long residentWeight() {
        long sum = 0;
        for (int i = 0; i < slots.length(); i++) {
            byte[] payload = slots.get(i);
            if (payload != null) {
                sum += BlockMemory.weight(payload);
            }
        }
        return sum;
    }

    /**
     * Visits the resident blocks with their file offsets (REQUIRES: {@link #offsets} known); false
     * if the visitor stopped.
     */
    boolean visitResident(CacheHint.Visitor visitor) {
        for (int i = 0; i < slots.length(); i++) {
            byte[] payload = slots.get(i);
            if (payload != null && !visitor.block(file, offsets[i], payload.length)) {
                return false;
            }
        }
        return true;
    }

    int residentBlocks() {
        int n = 0;
        for (int i = 0; i < slots.length(); i++) {
            if (slots.get(i) != null) {
                n++;
            }
        }
        return n;
    }
}
