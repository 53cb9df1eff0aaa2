package io.github.flinkstate.disagg.engine.iterator;

import io.github.flinkstate.disagg.engine.key.Bytes;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;

/**
 * K-way merge of internal iterators ordered by key ascending, then sequence number descending, so
 * the newest version of each key comes first. Duplicates are not removed here.
 *
 * <p>Thread safety: confined to one thread.
 *
 * <p>Invariants:
 *
 * <ol>
 *   <li>The heap holds exactly the valid children; the current entry is the heap's head.
 * </ol>
 */
public final class MergingIterator implements InternalIterator {

    private final List<InternalIterator> children;
    private final PriorityQueue<InternalIterator> heap;

    public MergingIterator(List<InternalIterator> children) {
        this.children = new ArrayList<>(children);
        this.heap =
                new PriorityQueue<>(
                        Math.max(1, children.size()),
                        (a, b) -> {
                            int c = Bytes.compare(a.key(), b.key());
                            return c != 0 ? c : Long.compare(b.seq(), a.seq());
                        });
    }

    @Override
    public void seek(byte[] target) throws IOException {
        heap.clear();
        for (InternalIterator c : children) {
            c.seek(target);
            if (c.valid()) {
                heap.add(c);
            }
        }
    }

    @Override
    public void seekToFirst() throws IOException {
        heap.clear();
        for (InternalIterator c : children) {
            c.seekToFirst();
            if (c.valid()) {
                heap.add(c);
            }
        }
    }

    @Override
    public boolean valid() {
        return !heap.isEmpty();
    }

    @Override
    public void next() throws IOException {
        InternalIterator top = heap.poll();
        top.next();
        if (top.valid()) {
            heap.add(top);
        }
    }

    @Override
    public byte[] key() {
        return heap.peek().key();
    }

    @Override
    public long seq() {
        return heap.peek().seq();
    }

    @Override
    public byte type() {
        return heap.peek().type();
    }

    @Override
    public byte[] value() {
        return heap.peek().value();
    }

    @Override
    public void close() {
        for (InternalIterator c : children) {
            c.close();
        }
    }
}
