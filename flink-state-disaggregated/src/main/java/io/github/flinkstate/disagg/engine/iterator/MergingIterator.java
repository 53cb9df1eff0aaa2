package io.github.flinkstate.disagg.engine.iterator;

import io.github.flinkstate.disagg.engine.key.Bytes;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * K-way merge of internal iterators ordered by key ascending, then sequence number descending, so
 * the newest version of each key comes first. Duplicates are not removed here.
 *
 * <p>A binary min-heap in three parallel arrays: the children, and each one's current key and
 * sequence number, read once per move of the child (a memtable's cursor copies its key on every
 * {@code key()}, and file iterators reach theirs through two or three wrappers). {@link #next}
 * advances the head and sifts it down once (no removal and re-insertion): a child that stays the
 * smallest, as in a run of keys from one input, costs one or two comparisons.
 *
 * <p>Invariants: positions {@code 0 .. size-1} hold exactly the valid children, each with the key
 * and sequence number it has now; no position is smaller than its parent; the current entry is
 * position 0's.
 *
 * <p>Thread safety: confined to one thread.
 */
public final class MergingIterator implements InternalIterator {

    private final List<InternalIterator> children;
    private final InternalIterator[] heap;
    private final byte[][] keys;
    private final long[] seqs;
    private int size;

    public MergingIterator(List<InternalIterator> children) {
        this.children = new ArrayList<>(children);
        this.heap = new InternalIterator[children.size()];
        this.keys = new byte[children.size()][];
        this.seqs = new long[children.size()];
    }

    @Override
    public void seek(byte[] target) throws IOException {
        size = 0;
        for (InternalIterator c : children) {
            c.seek(target);
            add(c);
        }
    }

    @Override
    public void seekToFirst() throws IOException {
        size = 0;
        for (InternalIterator c : children) {
            c.seekToFirst();
            add(c);
        }
    }

    @Override
    public boolean valid() {
        return size > 0;
    }

    @Override
    public void next() throws IOException {
        InternalIterator top = heap[0];
        top.next();
        if (top.valid()) {
            keys[0] = top.key();
            seqs[0] = top.seq();
        } else {
            size--;
            move(size, 0);
            heap[size] = null;
            keys[size] = null;
        }
        if (size > 1) {
            siftDown(0);
        }
    }

    @Override
    public byte[] key() {
        return keys[0];
    }

    @Override
    public long seq() {
        return seqs[0];
    }

    @Override
    public byte type() {
        return heap[0].type();
    }

    @Override
    public byte[] value() {
        return heap[0].value();
    }

    @Override
    public void close() {
        for (InternalIterator c : children) {
            c.close();
        }
    }

    /** Enters {@code c} if it is valid, at the end, then sifts it up. */
    private void add(InternalIterator c) {
        if (!c.valid()) {
            return;
        }
        int i = size++;
        heap[i] = c;
        keys[i] = c.key();
        seqs[i] = c.seq();
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            if (!less(i, parent)) {
                break;
            }
            swap(i, parent);
            i = parent;
        }
    }

    private void siftDown(int i) {
        while (true) {
            int left = 2 * i + 1;
            if (left >= size) {
                return;
            }
            int right = left + 1;
            int least = right < size && less(right, left) ? right : left;
            if (!less(least, i)) {
                return;
            }
            swap(i, least);
            i = least;
        }
    }

    /** Whether position {@code a}'s entry comes before position {@code b}'s. */
    private boolean less(int a, int b) {
        int c = Bytes.compare(keys[a], keys[b]);
        return c < 0 || (c == 0 && seqs[a] > seqs[b]);
    }

    private void swap(int a, int b) {
        InternalIterator h = heap[a];
        byte[] k = keys[a];
        long s = seqs[a];
        move(b, a);
        heap[b] = h;
        keys[b] = k;
        seqs[b] = s;
    }

    private void move(int from, int to) {
        heap[to] = heap[from];
        keys[to] = keys[from];
        seqs[to] = seqs[from];
    }
}
