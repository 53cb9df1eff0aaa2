package io.github.flinkstate.disagg.engine.memtable;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * A sorted map from byte-string keys to records (sequence number, entry type, value) kept in a few
 * large arrays instead of several objects per entry. A memtable of a million entries is then a few
 * dozen arrays to the garbage collector, not millions of small objects that every young collection
 * copies until they are old enough to be promoted.
 *
 * <p>Layout. Two arenas of chunks; an address is {@code chunk index << 32 | offset}. Chunk sizes
 * are 64 bytes short of the powers of two named below (see {@link #grown}); an element larger than
 * the largest chunk gets a chunk of its own.
 *
 * <ul>
 *   <li>Bytes ({@code byte[]} chunks of 4 KiB doubling up to 1 MiB): records {@code [seq: 8][type:
 *       1][value length: 4, -1 for none][value]}. Never modified once written.
 *   <li>Nodes ({@code long[]} chunks of 512 longs doubling up to 128 Ki): {@code [key length << 8 |
 *       height][record address][next at level 0 .. height-1][key]}, the key inline as big-endian
 *       words, the last one zero-padded. A search step then reads one node, not a node and a key
 *       elsewhere, and compares 8 bytes at a time (unsigned words order as their bytes do). Address
 *       0 is the head node (no key, {@link #MAX_HEIGHT} links), so 0 as a link means "none".
 * </ul>
 *
 * <p>A put of a present key publishes a new record and leaves the old one as garbage (reclaimed
 * with the memtable); so do the nodes {@link #removePrefix} unlinks.
 *
 * <p>Invariants (checked by {@link #checkInvariants}):
 *
 * <ol>
 *   <li>Each level is sorted by key, strictly, and every node linked at a level above 0 is linked
 *       at every level below it.
 *   <li>The writer's last path ({@link #preds}): each entry is the head or a node linked at its
 *       level (never an unlinked one), is at or after the entry one level up, and lies before the
 *       next node, at the level above, of the entry one level up. Then wherever the path brackets a
 *       key it brackets it at every level above, and a search from the lowest bracketing level
 *       finds the same predecessors as one from the head. A put keeps this (the entries below the
 *       new node's height become the node); a prefix removal first searches the whole height for
 *       the prefix, so no entry is a node it unlinks.
 * </ol>
 *
 * <p>Thread safety: one writer at a time (the caller serialises writes); any number of concurrent
 * lock-free readers. The writer fills bytes and node before it publishes them with a release store
 * (a link, level 0 first, or a record address); readers load links and record addresses with
 * acquire. A chunk is entered in its directory before any address inside it is published, and a
 * grown directory is published through a volatile field that readers read after the acquire.
 */
final class ArenaSkipList {

    static final int MAX_HEIGHT = 12;

    /** The record address of a removed key. */
    static final long REMOVED = -1L;

    private static final long HEAD = 0;
    private static final int FIRST_BYTE_CHUNK = 4 << 10;
    private static final int MAX_BYTE_CHUNK = 1 << 20;
    private static final int FIRST_NODE_CHUNK = 512;
    private static final int MAX_NODE_CHUNK = 128 << 10;
    private static final int RECORD_HEADER = Long.BYTES + 1 + Integer.BYTES;

    // a node's fields: offsets from its address
    private static final int META = 0;
    private static final int RECORD = 1;
    private static final int LINKS = 2;

    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle BIG_ENDIAN_LONG =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle BIG_ENDIAN_INT =
            MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);

    private volatile byte[][] byteChunks = new byte[4][];
    private volatile long[][] nodeChunks = new long[4][];

    // writer state
    private int byteChunkCount;
    private int bytePos;
    private int nodeChunkCount;
    private int nodePos;
    private long seed = 0x9E3779B97F4A7C15L;

    /**
     * The search path of the last write: at each level the last node before the key it wrote (or
     * the node it linked there); see invariant 2 of the class comment. All head (address 0) at
     * first.
     */
    private final long[] preds = new long[MAX_HEIGHT];

    /**
     * Bytes handed out from the chunks so far (records, keys, nodes); written by the writer only.
     */
    private volatile long usedBytes;

    /** Null, or the index of the nodes by key hash (see {@link KeyHashIndex}). */
    private final KeyHashIndex index;

    /** An empty list without a hash index; it allocates nothing before its first put. */
    ArenaSkipList() {
        this(false);
    }

    /**
     * An empty list; with {@code hashIndexed}, puts and {@link #findExactHashed} take the key's
     * hash and find present keys through a {@link KeyHashIndex}.
     */
    ArenaSkipList(boolean hashIndexed) {
        this.index = hashIndexed ? new KeyHashIndex() : null;
    }

    private void ensureHead() {
        if (nodeChunkCount == 0) {
            long head = allocNode(LINKS + MAX_HEIGHT);
            long[] c = nodeChunk(head);
            c[META] = MAX_HEIGHT;
            c[RECORD] = REMOVED;
        }
    }

    /**
     * Maps {@code key} to a new record; returns whether the key was new. REQUIRES the caller's
     * write serialisation.
     *
     * @param value null for none (a delete)
     */
    boolean put(byte[] key, long seq, byte type, byte[] value) {
        if (index != null) {
            throw new IllegalStateException("a hash-indexed list takes the key's hash");
        }
        return put(key, 0, seq, type, value);
    }

    /**
     * As {@link #put(byte[], long, byte, byte[])}, for a key whose {@code BloomFilter.hash} is
     * {@code hash} (used by a hash-indexed list only): a present key's record is replaced without a
     * search of the list.
     */
    boolean put(byte[] key, long hash, long seq, byte type, byte[] value) {
        ensureHead();
        if (index != null) {
            long present = index.find(key, hash, this);
            if (present > 0 && record(present) != REMOVED) {
                LONGS.setRelease(
                        nodeChunk(present),
                        offset(present) + RECORD,
                        writeRecord(seq, type, value));
                return false;
            }
        }
        long found = findFromLastPath(key);
        long record = writeRecord(seq, type, value);
        if (found != 0 && compare(found, key, key.length) == 0) {
            LONGS.setRelease(nodeChunk(found), offset(found) + RECORD, record);
            return false;
        }
        int height = randomHeight();
        long node = allocNode(LINKS + height + words(key.length));
        long[] c = nodeChunk(node);
        int o = offset(node);
        c[o + META] = ((long) key.length << 8) | height;
        c[o + RECORD] = record;
        for (int level = 0; level < height; level++) {
            c[o + LINKS + level] = next(preds[level], level);
        }
        int k = o + LINKS + height;
        for (int i = 0; i < key.length; i += Long.BYTES) {
            c[k++] = word(key, i, key.length);
        }
        for (int level = 0; level < height; level++) {
            long pred = preds[level];
            LONGS.setRelease(nodeChunk(pred), offset(pred) + LINKS + level, node);
            preds[level] = node; // the path of the key just written
        }
        if (index != null) {
            index.put(key, hash, node, this);
        }
        return true;
    }

    /**
     * Removes every key starting with {@code prefix}; returns how many there were. Their nodes are
     * marked {@link #REMOVED} and then unlinked at every level, so later searches and scans do not
     * pass them; a reader standing on one still finds its way on through its links (nodes are never
     * reused). REQUIRES the caller's write serialisation.
     */
    int removePrefix(byte[] prefix) {
        if (nodeChunkCount == 0) {
            return 0;
        }
        long first = find(prefix, prefix.length, preds);
        int removed = 0;
        for (long n = first; n != 0 && keyStartsWith(n, prefix); n = next(n, 0)) {
            LONGS.setRelease(nodeChunk(n), offset(n) + RECORD, REMOVED);
            removed++;
        }
        if (removed > 0) {
            for (int level = 0; level < MAX_HEIGHT; level++) {
                long pred = preds[level];
                long after = next(pred, level);
                while (after != 0 && keyStartsWith(after, prefix)) {
                    after = next(after, level);
                }
                LONGS.setRelease(nodeChunk(pred), offset(pred) + LINKS + level, after);
            }
        }
        return removed;
    }

    /**
     * The node holding {@code key} exactly, or 0; {@code hash} is its {@code BloomFilter.hash}. A
     * hash-indexed list answers from its index; the node may be a removed one (check {@link
     * #record}).
     */
    long findExactHashed(byte[] key, long hash) {
        if (index != null) {
            long n = index.find(key, hash, this);
            if (n != KeyHashIndex.UNKNOWN) {
                return n;
            }
        }
        return findExact(key, key.length);
    }

    /** Whether the node's key is exactly the first {@code length} bytes of {@code key}. */
    boolean keyEquals(long node, byte[] key, int length) {
        return keyLength(node) == length && compareCommon(node, key, length) == 0;
    }

    /** Bytes of heap the hash index takes (0 without one). */
    long indexBytes() {
        return index == null ? 0 : index.sizeBytes();
    }

    /** The node holding the first {@code length} bytes of {@code key} exactly, or 0. */
    long findExact(byte[] key, int length) {
        long n = find(key, length, null);
        return n != 0 && compare(n, key, length) == 0 ? n : 0;
    }

    /** The first node whose key is at least {@code key}, or 0. */
    long ceiling(byte[] key) {
        return find(key, key.length, null);
    }

    /**
     * The node after {@code node} at level 0, or 0; 0 is the head. After a node that was removed
     * while the caller stood on it, this may be a removed node too (check {@link #record}).
     */
    long next(long node) {
        return node == HEAD && nodeChunks[0] == null ? 0 : next(node, 0);
    }

    /** The node's record address at this moment; {@link #REMOVED} for a removed key. */
    long record(long node) {
        return (long) LONGS.getAcquire(nodeChunk(node), offset(node) + RECORD);
    }

    /** A copy of the node's key. */
    byte[] key(long node) {
        long[] c = nodeChunk(node);
        int o = offset(node);
        long meta = c[o + META];
        byte[] key = new byte[(int) (meta >>> 8)];
        int k = o + LINKS + (int) (meta & 0xFF);
        int i = 0;
        for (; i + Long.BYTES <= key.length; i += Long.BYTES) {
            BIG_ENDIAN_LONG.set(key, i, c[k++]);
        }
        for (long w = i < key.length ? c[k] : 0; i < key.length; i++, w <<= 8) {
            key[i] = (byte) (w >>> 56);
        }
        return key;
    }

    /** Whether the node's key starts with {@code prefix}. */
    boolean keyStartsWith(long node, byte[] prefix) {
        return keyLength(node) >= prefix.length && compareCommon(node, prefix, prefix.length) == 0;
    }

    /** The sequence number of the record at {@code record} (an address from {@link #record}). */
    long seq(long record) {
        return (long) BIG_ENDIAN_LONG.get(byteChunk(record), offset(record));
    }

    /** The entry type of the record at {@code record}. */
    byte type(long record) {
        return byteChunk(record)[offset(record) + Long.BYTES];
    }

    /** A copy of the value of the record at {@code record}, or null. */
    byte[] value(long record) {
        byte[] b = byteChunk(record);
        int o = offset(record) + Long.BYTES + 1;
        int length = (int) BIG_ENDIAN_INT.get(b, o);
        return length < 0 ? null : Arrays.copyOfRange(b, o + Integer.BYTES, o + 4 + length);
    }

    /**
     * Bytes of records, keys and nodes written so far. The heap holds this plus the unused end of
     * the last chunk of each arena (at most 1 MiB each) and of each chunk left when a record or
     * node larger than a chunk took one of its own (uncounted: values and keys of that size are
     * rare).
     */
    long usedBytes() {
        return usedBytes;
    }

    // ------------------------------------------------------------------ search

    /**
     * The first node whose key is at least the first {@code length} bytes of {@code key}, or 0; if
     * {@code preds} is not null, fills it with each level's last node before that key.
     */
    private long find(byte[] key, int length, long[] preds) {
        if (nodeChunks[0] == null) {
            return 0; // nothing was ever put
        }
        return find(key, length, preds, MAX_HEIGHT - 1, HEAD, 0);
    }

    /**
     * As {@link #find(byte[], int, long[])} for a whole key, filling {@link #preds}, but starting
     * at the lowest level where the last write's path still brackets the key (its node there is
     * before the key, and the next one is not), so that ascending writes of nearby keys (a map's
     * {@code putAll}, a sorted batch) search a level or two instead of the whole height. Where the
     * path brackets the key at one level it does at every level above: a valid path widens upwards.
     */
    private long findFromLastPath(byte[] key) {
        int level = 0;
        while (level < MAX_HEIGHT && !brackets(preds[level], level, key)) {
            level++;
        }
        // the bracketing node's next one there is known not less than the key: not compared again
        return level == MAX_HEIGHT
                ? find(key, key.length, preds, MAX_HEIGHT - 1, HEAD, 0)
                : find(key, key.length, preds, level, preds[level], next(preds[level], level));
    }

    /** Whether {@code pred} is before {@code key} and its next node at {@code level} is not. */
    private boolean brackets(long pred, int level, byte[] key) {
        if (pred != HEAD && compare(pred, key, key.length) >= 0) {
            return false;
        }
        long n = next(pred, level);
        return n == 0 || compare(n, key, key.length) >= 0;
    }

    /**
     * The search from node {@code x} (before the key, and linked at level {@code top}) down from
     * level {@code top}; fills the levels up to {@code top} of {@code preds} if it is not null.
     * {@code knownNotLess} is a node after {@code x} already known to be at least the key, or 0.
     */
    private long find(byte[] key, int length, long[] preds, int top, long x, long knownNotLess) {
        // knownNotLess: the last node compared and found >= key (0: none, the end)
        for (int level = top; level >= 0; level--) {
            while (true) {
                long n = next(x, level);
                if (n == 0 || n == knownNotLess || compare(n, key, length) >= 0) {
                    knownNotLess = n;
                    break;
                }
                x = n;
            }
            if (preds != null) {
                preds[level] = x;
            }
        }
        // the node compared at level 0, not a new read of x's link: a key put since then between
        // x and it would be smaller than the key searched
        return knownNotLess;
    }

    /** The node's key against the first {@code length} bytes of {@code key}: sign only. */
    private int compare(long node, byte[] key, int length) {
        int common = compareCommon(node, key, length);
        return common != 0 ? common : Integer.compare(keyLength(node), length);
    }

    /**
     * The node's key against the first {@code length} bytes of {@code key} over the bytes both have
     * (sign only): 0 when one is a prefix of the other.
     */
    private int compareCommon(long node, byte[] key, int length) {
        long[] c = nodeChunk(node);
        int o = offset(node);
        long meta = c[o + META];
        int common = Math.min((int) (meta >>> 8), length);
        int k = o + LINKS + (int) (meta & 0xFF);
        int i = 0;
        for (; i + Long.BYTES <= common; i += Long.BYTES, k++) {
            long a = c[k];
            long b = (long) BIG_ENDIAN_LONG.get(key, i);
            if (a != b) {
                return Long.compareUnsigned(a, b);
            }
        }
        if (i == common) {
            return 0;
        }
        int drop = Long.SIZE - Byte.SIZE * (common - i); // the bytes beyond the common ones
        return Long.compareUnsigned(c[k] >>> drop, word(key, i, key.length) >>> drop);
    }

    private int keyLength(long node) {
        return (int) (nodeChunk(node)[offset(node) + META] >>> 8);
    }

    private long next(long node, int level) {
        return (long) LONGS.getAcquire(nodeChunk(node), offset(node) + LINKS + level);
    }

    /** Longs that hold a key of {@code length} bytes. */
    private static int words(int length) {
        return (length + Long.BYTES - 1) / Long.BYTES;
    }

    /**
     * The big-endian word of {@code key}'s bytes {@code from} to {@code from + 7}, bytes at or
     * beyond {@code length} (at most the array's length) read as 0.
     */
    private static long word(byte[] key, int from, int length) {
        if (from + Long.BYTES <= length) {
            return (long) BIG_ENDIAN_LONG.get(key, from);
        }
        long w = 0;
        for (int i = 0; i < Long.BYTES; i++) {
            w = w << 8 | (from + i < length ? key[from + i] & 0xFF : 0);
        }
        return w;
    }

    // ------------------------------------------------------------------ allocation (writer)

    private long writeRecord(long seq, byte type, byte[] value) {
        int length = value == null ? -1 : value.length;
        long address = allocBytes(RECORD_HEADER + Math.max(length, 0));
        byte[] b = byteChunk(address);
        int o = offset(address);
        BIG_ENDIAN_LONG.set(b, o, seq);
        b[o + Long.BYTES] = type;
        BIG_ENDIAN_INT.set(b, o + Long.BYTES + 1, length);
        if (length > 0) {
            System.arraycopy(value, 0, b, o + RECORD_HEADER, length);
        }
        return address;
    }

    private long allocBytes(int size) {
        byte[][] dir = byteChunks;
        if (byteChunkCount == 0 || bytePos + size > dir[byteChunkCount - 1].length) {
            int chunkSize =
                    Math.max(size, grown(FIRST_BYTE_CHUNK, MAX_BYTE_CHUNK, byteChunkCount, 64));
            byteChunks = dir = withChunk(dir, byteChunkCount, new byte[chunkSize]);
            byteChunkCount++;
            bytePos = 0;
        }
        long address = ((long) (byteChunkCount - 1) << 32) | bytePos;
        bytePos += size;
        usedBytes += size;
        return address;
    }

    /** Room for a node of {@code size} longs (a node larger than a chunk gets one of its own). */
    private long allocNode(int size) {
        long[][] dir = nodeChunks;
        if (nodeChunkCount == 0 || nodePos + size > dir[nodeChunkCount - 1].length) {
            int chunkSize =
                    Math.max(size, grown(FIRST_NODE_CHUNK, MAX_NODE_CHUNK, nodeChunkCount, 8));
            nodeChunks = dir = withChunk(dir, nodeChunkCount, new long[chunkSize]);
            nodeChunkCount++;
            nodePos = 0;
        }
        long address = ((long) (nodeChunkCount - 1) << 32) | nodePos;
        nodePos += size;
        usedBytes += (long) size * Long.BYTES;
        return address;
    }

    /**
     * The size of chunk number {@code count}: {@code first} doubled per chunk up to {@code max},
     * less {@code pad} elements. The pad keeps array and header under a power of two: G1 allocates
     * an array of half a region or more as a humongous object in whole regions, and a chunk of
     * exactly 1 MiB would take two regions of 1 MiB.
     */
    private static int grown(int first, int max, int count, int pad) {
        int size = first;
        for (int i = 0; i < count && size < max; i++) {
            size <<= 1;
        }
        return Math.min(size, max) - pad;
    }

    /**
     * Checks the invariants of the class comment by a walk of every level (for tests; O(n) per
     * level). REQUIRES no concurrent writer.
     *
     * @throws IllegalStateException naming the first one broken
     */
    void checkInvariants() {
        if (nodeChunkCount == 0) {
            return;
        }
        for (int level = 0; level < MAX_HEIGHT; level++) {
            long below = level == 0 ? 0 : next(HEAD, level - 1);
            for (long n = next(HEAD, level), prev = 0; n != 0; prev = n, n = next(n, level)) {
                if (prev != 0 && compareNodes(n, prev) <= 0) {
                    throw new IllegalStateException("level " + level + " is not sorted");
                }
                while (level > 0 && below != 0 && below != n) {
                    below = next(below, level - 1);
                }
                if (level > 0 && below == 0) {
                    throw new IllegalStateException(
                            "a node at level " + level + " is not linked at level " + (level - 1));
                }
            }
        }
        for (int level = 0; level < MAX_HEIGHT; level++) {
            long entry = preds[level];
            if (entry != HEAD && !linkedAt(entry, level)) {
                throw new IllegalStateException(
                        "the last path's node at " + level + " is unlinked");
            }
            if (level + 1 < MAX_HEIGHT) {
                long up = preds[level + 1];
                if (up != HEAD && (entry == HEAD || compareNodes(entry, up) < 0)) {
                    throw new IllegalStateException("the last path goes back at level " + level);
                }
                long upNext = next(up, level + 1);
                if (entry != HEAD && upNext != 0 && compareNodes(upNext, entry) <= 0) {
                    throw new IllegalStateException("the last path passes level " + (level + 1));
                }
            }
        }
    }

    /** Node {@code a}'s key against node {@code b}'s: sign only (for the checks). */
    private int compareNodes(long a, long b) {
        byte[] key = key(b);
        return compare(a, key, key.length);
    }

    /** Whether {@code node} is reached by the walk of {@code level} from the head. */
    private boolean linkedAt(long node, int level) {
        for (long n = next(HEAD, level); n != 0; n = next(n, level)) {
            if (n == node) {
                return true;
            }
        }
        return false;
    }

    /** Chunks of the byte arena (for tests). */
    int byteChunkCount() {
        return byteChunkCount;
    }

    /** Chunks of the node arena (for tests). */
    int nodeChunkCount() {
        return nodeChunkCount;
    }

    /** The directory with {@code chunk} at {@code index}: in place, or a grown copy. */
    private static <T> T[] withChunk(T[] dir, int index, T chunk) {
        T[] out = index < dir.length ? dir : Arrays.copyOf(dir, dir.length * 2);
        out[index] = chunk;
        return out;
    }

    private int randomHeight() {
        long r = seed;
        r ^= r << 13;
        r ^= r >>> 7;
        r ^= r << 17;
        seed = r;
        int height = 1;
        while (height < MAX_HEIGHT && (r & 3) == 0) { // one in four goes one level higher
            height++;
            r >>>= 2;
        }
        return height;
    }

    // ------------------------------------------------------------------ addressing

    private byte[] byteChunk(long address) {
        return byteChunks[(int) (address >>> 32)];
    }

    private long[] nodeChunk(long address) {
        return nodeChunks[(int) (address >>> 32)];
    }

    private static int offset(long address) {
        return (int) address;
    }
}
