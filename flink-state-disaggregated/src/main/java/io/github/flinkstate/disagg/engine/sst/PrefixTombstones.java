package io.github.flinkstate.disagg.engine.sst;

import java.util.Arrays;
import java.util.List;

/**
 * The prefix tombstones of one file, indexed once when the file's metadata is created so that every
 * version listing the file shares the index instead of rebuilding it.
 *
 * <p>Index: an open-addressing hash table over the distinct prefixes (linear probing, at most half
 * full), each slot holding the highest sequence number of the tombstones with that prefix. A lookup
 * hashes the key's first {@code n} bytes for each distinct prefix length {@code n} and compares
 * bytes in place: it allocates nothing.
 *
 * <p>Thread safety: immutable.
 */
public final class PrefixTombstones {

    public static final PrefixTombstones EMPTY = new PrefixTombstones(List.of());

    private final List<PrefixTombstone> list;

    /** Distinct prefix lengths, ascending. */
    private final int[] lengths;

    /** Slot i: index into {@link #list} of a tombstone with the slot's prefix, or -1 when empty. */
    private final int[] slots;

    /** Slot i: highest sequence number among the tombstones with the slot's prefix. */
    private final long[] slotSeqs;

    private final long maxSeq;

    private PrefixTombstones(List<PrefixTombstone> list) {
        this.list = list;
        int tableSize = Integer.highestOneBit(Math.max(1, list.size()) * 2) * 2;
        this.slots = new int[list.isEmpty() ? 0 : tableSize];
        this.slotSeqs = new long[slots.length];
        Arrays.fill(slots, -1);
        long max = 0;
        int[] lens = new int[list.size()];
        for (int i = 0; i < list.size(); i++) {
            PrefixTombstone t = list.get(i);
            lens[i] = t.prefix().length;
            max = Math.max(max, t.seq());
            insert(i, t);
        }
        this.lengths = Arrays.stream(lens).distinct().sorted().toArray();
        this.maxSeq = max;
    }

    /** The tombstones in {@code list}, indexed; the list is copied. */
    public static PrefixTombstones of(List<PrefixTombstone> list) {
        return list.isEmpty() ? EMPTY : new PrefixTombstones(List.copyOf(list));
    }

    private void insert(int index, PrefixTombstone t) {
        byte[] p = t.prefix();
        int mask = slots.length - 1;
        int s = (int) BloomFilter.hash(p, p.length) & mask;
        while (slots[s] >= 0) {
            if (Arrays.equals(list.get(slots[s]).prefix(), p)) {
                slotSeqs[s] = Math.max(slotSeqs[s], t.seq());
                return;
            }
            s = (s + 1) & mask;
        }
        slots[s] = index;
        slotSeqs[s] = t.seq();
    }

    /** The tombstones in the order they were given. */
    public List<PrefixTombstone> list() {
        return list;
    }

    public int size() {
        return list.size();
    }

    public boolean isEmpty() {
        return list.isEmpty();
    }

    /** The highest sequence number of all tombstones here, 0 when there are none. */
    public long maxSeq() {
        return maxSeq;
    }

    /** The highest sequence number of a tombstone whose prefix starts {@code key}, or 0. */
    public long coveringSeq(byte[] key) {
        long best = 0;
        int mask = slots.length - 1;
        for (int len : lengths) {
            if (len > key.length) {
                break;
            }
            int s = (int) BloomFilter.hash(key, len) & mask;
            while (slots[s] >= 0) {
                byte[] p = list.get(slots[s]).prefix();
                if (p.length == len && Arrays.equals(p, 0, len, key, 0, len)) {
                    best = Math.max(best, slotSeqs[s]);
                    break;
                }
                s = (s + 1) & mask;
            }
        }
        return best;
    }
}
