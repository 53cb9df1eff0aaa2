package io.github.flinkstate.disagg.engine.memtable;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A bloom filter over the keys (and bloom prefixes) written to one memtable, so that a point read
 * or a list read of something the memtable does not hold skips its skip list. Most reads of a large
 * state miss the memtable: without the filter each of them walks the skip list, a dozen dependent
 * cache misses, before going to the files.
 *
 * <p>Layout: an array of 64-bit words; a hash selects one word and sets or tests {@link #PROBES}
 * bits in it, so a test touches one cache line and never divides. Hashes are {@code
 * BloomFilter.hash} values, computed once per read and shared with the files' filters.
 *
 * <p>Size: a filter takes up to {@link #capacity()} hashes at {@link #MIN_BITS_PER_HASH} bits each
 * or more; the memtable then replaces it by one {@link #sizedFor} the keys it holds, filled again
 * from its entries, so the filter stays proportional to what the memtable holds: right after a
 * rebuild it has at least 24 bits per hash. An entry is charged at least 64 bytes and adds at most
 * two hashes, so the filter is at most about a sixth of the memtable's charged bytes (tested), and
 * a few percent with typical entries.
 *
 * <p>Never a false negative: bits are only ever set.
 *
 * <p>Thread safety: one writer at a time (the memtable's); writes publish with release semantics
 * and tests read with acquire semantics, so a reader that sees an entry also sees its bits.
 */
final class MemtableFilter {

    static final int PROBES = 3;

    static final int MIN_BITS_PER_HASH = 12;

    static final int GROWTH = 2;

    /** Words of the first filter of a memtable (8 KiB). */
    static final int FIRST_WORDS = 1024;

    /**
     * Largest filter (128 MiB): past its capacity it answers correctly with more false positives.
     */
    private static final int MAX_WORDS = 1 << 24;

    private static final VarHandle WORDS = MethodHandles.arrayElementVarHandle(long[].class);

    private final long[] words;
    private int hashes;

    private MemtableFilter(int wordCount) {
        this.words = new long[wordCount];
    }

    /**
     * An empty filter with room for at least twice {@code hashes} (at most {@link #MAX_WORDS}): the
     * smallest of {@link #FIRST_WORDS} times a power of {@link #GROWTH}.
     */
    static MemtableFilter sizedFor(long hashes) {
        int words = FIRST_WORDS;
        while (words < MAX_WORDS && capacity(words) < 2 * hashes) {
            words *= GROWTH;
        }
        return new MemtableFilter(words);
    }

    /** Hashes this filter takes before the memtable should replace it. */
    int capacity() {
        return words.length == MAX_WORDS ? Integer.MAX_VALUE : capacity(words.length);
    }

    private static int capacity(int words) {
        return (int) ((long) words * Long.SIZE / MIN_BITS_PER_HASH);
    }

    /** Hashes added so far (repeats included). */
    int hashes() {
        return hashes;
    }

    /** Bytes of heap the filter's array takes. */
    long sizeBytes() {
        return (long) words.length * Long.BYTES;
    }

    void add(long hash) {
        hashes++;
        int w = wordOf(hash);
        long bits = bitsOf(hash);
        long old = (long) WORDS.get(words, w);
        if ((old & bits) != bits) {
            WORDS.setRelease(words, w, old | bits);
        }
    }

    boolean mightContain(long hash) {
        long bits = bitsOf(hash);
        return ((long) WORDS.getAcquire(words, wordOf(hash)) & bits) == bits;
    }

    private int wordOf(long hash) {
        return (int) (((hash >>> 32) * words.length) >>> 32);
    }

    /** {@link #PROBES} bit positions taken from the hash's low 32 bits, 6 bits each. */
    private static long bitsOf(long hash) {
        int h = (int) hash;
        return (1L << (h & 63)) | (1L << ((h >>> 6) & 63)) | (1L << ((h >>> 12) & 63));
    }
}
