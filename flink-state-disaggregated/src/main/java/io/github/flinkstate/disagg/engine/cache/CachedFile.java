package io.github.flinkstate.disagg.engine.cache;

import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The cached blocks of one file in a {@link BlockCache}: one slot and one CLOCK reference bit per
 * data block, addressed by block index. A read calls {@link #lookup} and, on a miss, reads and
 * verifies the block and hands it to {@link #insert}. Obtained from {@link BlockCache#open} by each
 * reader of the file and released when the reader closes; the last release drops the file's blocks.
 *
 * <p>Thread safety: thread-safe. {@link #lookup} is lock-free; slots are only written by the owning
 * cache under its lock. After the final release, {@link #lookup} still works, but {@link #insert}
 * no longer caches anything (a reader evicted while an iterator still uses it keeps working).
 */
public final class CachedFile {

    private final BlockCache cache;
    private final String file;
    private final AtomicReferenceArray<byte[]> slots;
    private final byte[] referenced;

    /** Readers holding this file open; guarded by the cache's lock. */
    int refs;

    CachedFile(BlockCache cache, String file, int blockCount) {
        this.cache = cache;
        this.file = file;
        this.slots = new AtomicReferenceArray<>(blockCount);
        this.referenced = new byte[blockCount];
    }

    public String file() {
        return file;
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
     * Caches a verified payload read after a {@link #lookup} miss and returns the resident copy
     * (another reader's, if it won the race; the argument itself if it is not cached).
     */
    public byte[] insert(int block, byte[] payload) {
        return cache.insert(this, block, payload);
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
