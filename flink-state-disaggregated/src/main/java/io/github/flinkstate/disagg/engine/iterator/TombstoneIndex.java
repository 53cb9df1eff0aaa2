package io.github.flinkstate.disagg.engine.iterator;

import io.github.flinkstate.disagg.engine.key.KeyRange;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Answers "which prefix tombstone with the highest sequence number covers this key?" for a set of
 * files. Each tombstone is scoped: it applies only to keys inside the effective range of the file
 * that holds it (the file's key range intersected with its key-group clip).
 *
 * <p>Thread safety: immutable after construction.
 *
 * <p>Lookup cost: one hash probe per distinct tombstone prefix length.
 */
public final class TombstoneIndex {

    public static final TombstoneIndex EMPTY = new TombstoneIndex(new HashMap<>(), new int[0]);

    private record Scoped(long seq, KeyRange scope) {}

    private final Map<ByteBuffer, List<Scoped>> byPrefix;
    private final int[] lengths;

    private TombstoneIndex(Map<ByteBuffer, List<Scoped>> byPrefix, int[] lengths) {
        this.byPrefix = byPrefix;
        this.lengths = lengths;
    }

    /** Accumulates scoped tombstones. */
    public static final class Builder {
        private final Map<ByteBuffer, List<Scoped>> map = new HashMap<>();
        private final TreeSet<Integer> lengths = new TreeSet<>();

        public Builder add(byte[] prefix, long seq, KeyRange scope) {
            map.computeIfAbsent(ByteBuffer.wrap(prefix.clone()), k -> new ArrayList<>())
                    .add(new Scoped(seq, scope));
            lengths.add(prefix.length);
            return this;
        }

        public TombstoneIndex build() {
            if (map.isEmpty()) {
                return EMPTY;
            }
            return new TombstoneIndex(map, lengths.stream().mapToInt(Integer::intValue).toArray());
        }
    }

    public boolean isEmpty() {
        return byPrefix.isEmpty();
    }

    /** The highest sequence number of a tombstone covering {@code key}, or 0. */
    public long coveringSeq(byte[] key) {
        long best = 0;
        for (int len : lengths) {
            if (len > key.length) {
                break;
            }
            List<Scoped> hits = byPrefix.get(ByteBuffer.wrap(Arrays.copyOf(key, len)));
            if (hits != null) {
                for (Scoped s : hits) {
                    if (s.seq > best && s.scope.contains(key)) {
                        best = s.seq;
                    }
                }
            }
        }
        return best;
    }
}
