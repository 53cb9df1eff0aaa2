package io.github.flinkstate.disagg.engine.memtable;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * An open-addressing hash table from keys to the nodes of one {@link ArenaSkipList}, so that a
 * point read (or an overwrite) of a key the list holds finds its node in a probe or two instead of
 * a skip-list search: on a memtable of a few hundred thousand keys that search is a dozen or more
 * dependent cache misses, one per node visited.
 *
 * <p>Layout: one {@code long} per slot, 0 for an empty slot; else the key hash's top 31 bits (the
 * tag) above the node's address packed into 33 bits ({@code chunk << 17 | offset}; a node starts
 * within the first 2^17 longs of its chunk: only a node larger than a chunk has a chunk of its
 * own). A hash's home slot is its top bits; collisions probe the next slots. Hashes are {@code
 * BloomFilter.hash} values, computed once per read or write and shared with the memtable's filter
 * and the files' filters.
 *
 * <p>Every key the list ever linked has exactly one slot: a key removed by a prefix delete keeps
 * its node (marked removed, which readers check), and the node a later put of that key links takes
 * over the same slot.
 *
 * <p>Growth: at three quarters full, the writer fills a table of twice the size and publishes it
 * through a volatile field; a reader still probing the old table can miss only keys put after it
 * started, which it may miss anyway. Memory: 8 bytes per slot, so 11 to 21 bytes per key.
 *
 * <p>If a node address does not fit the packing (more than 2^16 node chunks, about 64 GiB of
 * nodes), the index switches itself off for good and {@link #find} answers "unknown", so the caller
 * searches the list.
 *
 * <p>Thread safety: one writer at a time (the list's); readers are lock-free. The writer fills a
 * node before it publishes the node's slot with a release store; readers load slots with acquire.
 */
final class KeyHashIndex {

    /** Returned by {@link #find} when the index is off: the caller must search the list. */
    static final long UNKNOWN = -1L;

    private static final int FIRST_SLOTS = 64;
    private static final int MAX_SLOTS = 1 << 30;
    private static final int OFFSET_BITS = 17;
    private static final int CHUNK_BITS = 16;
    private static final int TAG_SHIFT = OFFSET_BITS + CHUNK_BITS;

    private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(long[].class);

    /** One empty slot until the first put (an empty memtable charges nothing). */
    private volatile long[] table = new long[1];

    /** False once a node did not fit; written by the writer only. */
    private volatile boolean on = true;

    /** Occupied slots; written by the writer only. */
    private int used;

    /**
     * The node of {@code key} (its hash {@code hash}), 0 if the list never linked it, or {@link
     * #UNKNOWN} if the index is off.
     */
    long find(byte[] key, long hash, ArenaSkipList list) {
        if (!on) {
            return UNKNOWN;
        }
        long[] t = table;
        int mask = t.length - 1;
        long tag = hash >>> TAG_SHIFT;
        for (int i = home(tag, t.length); ; i = (i + 1) & mask) {
            long slot = (long) SLOTS.getAcquire(t, i);
            if (slot == 0) {
                return 0;
            }
            if (slot >>> TAG_SHIFT == tag) {
                long node = unpack(slot);
                if (list.keyEquals(node, key, key.length)) {
                    return node;
                }
            }
        }
    }

    /**
     * Enters {@code node}, which the list has just linked for {@code key} (its hash {@code hash}),
     * in place of the key's earlier node if there is one. REQUIRES the list's write serialisation.
     */
    void put(byte[] key, long hash, long node, ArenaSkipList list) {
        if (!on) {
            return;
        }
        long chunk = node >>> 32;
        long offset = (int) node;
        if (chunk >= (1L << CHUNK_BITS) || offset >= (1L << OFFSET_BITS)) {
            // readers search the list from now on; the table stays (still right for what it
            // holds), so a reader that saw the index on before this finds nothing wrong in it
            on = false;
            return;
        }
        if ((used + 1) * 4L > table.length * 3L) {
            if (table.length == MAX_SLOTS) {
                on = false; // full: never reached by a memtable a heap can hold
                return;
            }
            grow(Math.max(FIRST_SLOTS, table.length * 2));
        }
        long[] t = table;
        int mask = t.length - 1;
        long tag = hash >>> TAG_SHIFT;
        long slot = tag << TAG_SHIFT | chunk << OFFSET_BITS | offset;
        for (int i = home(tag, t.length); ; i = (i + 1) & mask) {
            long s = t[i];
            if (s == 0) {
                used++;
                SLOTS.setRelease(t, i, slot);
                return;
            }
            if (s >>> TAG_SHIFT == tag && list.keyEquals(unpack(s), key, key.length)) {
                SLOTS.setRelease(t, i, slot); // a key linked again after a prefix delete
                return;
            }
        }
    }

    /** Bytes of heap the table takes (none before the first put). */
    long sizeBytes() {
        long[] t = table;
        return t.length == 1 ? 0 : (long) t.length * Long.BYTES;
    }

    /** Whether the index answers (false once a node did not fit). */
    boolean isOn() {
        return on;
    }

    private void grow(int slots) {
        long[] old = table;
        long[] fresh = new long[slots];
        int mask = fresh.length - 1;
        for (long s : old) {
            if (s != 0) {
                int i = home(s >>> TAG_SHIFT, fresh.length);
                while (fresh[i] != 0) {
                    i = (i + 1) & mask;
                }
                fresh[i] = s;
            }
        }
        table = fresh; // the volatile write publishes the filled table
    }

    /** The home slot of a tag (a hash's top 31 bits) in a table of {@code slots} (a power of 2). */
    private static int home(long tag, int slots) {
        return (int) (tag >>> (31 - Integer.numberOfTrailingZeros(slots)));
    }

    private static long unpack(long slot) {
        long chunk = (slot >>> OFFSET_BITS) & ((1L << CHUNK_BITS) - 1);
        return chunk << 32 | (slot & ((1L << OFFSET_BITS) - 1));
    }
}
