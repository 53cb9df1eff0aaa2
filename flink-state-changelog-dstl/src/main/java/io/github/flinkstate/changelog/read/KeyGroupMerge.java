package io.github.flinkstate.changelog.read;

import io.github.flinkstate.changelog.format.SegmentChanges;
import java.io.IOException;
import java.util.Comparator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.PriorityQueue;
import javax.annotation.Nullable;
import org.apache.flink.runtime.state.changelog.StateChange;

/**
 * Merges consecutive segments of one handle whose changes are each in key-group order into one
 * sequence in key-group order: metadata changes first, then every key group's changes, and within a
 * key group the changes of earlier segments before those of later ones (each segment's own order
 * kept). So every key group sees its changes in append order, which is all a replay needs, while
 * the delegate backend receives one key group at a time instead of one interleaving per segment.
 *
 * <p>Not thread-safe: one reader thread. {@link #close()} closes every segment.
 */
final class KeyGroupMerge implements AutoCloseable {

    private static final Comparator<Head> ORDER =
            Comparator.<Head>comparingInt(h -> h.change.getKeyGroup())
                    .thenComparingInt(h -> h.index);

    /** Heads of the segments other than {@link #current}, smallest first. */
    private final PriorityQueue<Head> heads = new PriorityQueue<>(ORDER);

    private final List<SegmentChanges> segments;

    /** The smallest head; changes are taken from it while it stays the smallest. */
    @Nullable private Head current;

    /**
     * @param segments in handle order, each {@link SegmentChanges#keyGroupOrdered ordered}
     */
    KeyGroupMerge(List<SegmentChanges> segments) throws IOException {
        this.segments = segments;
        for (int i = 0; i < segments.size(); i++) {
            SegmentChanges s = segments.get(i);
            if (s.hasNext()) {
                heads.add(new Head(i, s, s.next()));
            }
        }
        current = heads.poll();
    }

    boolean hasNext() {
        return current != null;
    }

    StateChange next() throws IOException {
        if (current == null) {
            throw new NoSuchElementException();
        }
        StateChange result = current.change;
        if (current.segment.hasNext()) {
            current.change = current.segment.next();
            Head smallest = heads.peek();
            if (smallest != null && ORDER.compare(smallest, current) < 0) {
                heads.add(current);
                current = heads.poll();
            }
        } else {
            current = heads.poll();
        }
        return result;
    }

    @Override
    public void close() {
        segments.forEach(SegmentChanges::close);
    }

    private static final class Head {
        final int index;
        final SegmentChanges segment;
        StateChange change;

        Head(int index, SegmentChanges segment, StateChange change) {
            this.index = index;
            this.segment = segment;
            this.change = change;
        }
    }
}
