package io.github.flinkstate.disagg.engine.iterator;

import io.github.flinkstate.disagg.engine.key.Bytes;
import io.github.flinkstate.disagg.engine.key.KeyRange;
import io.github.flinkstate.disagg.engine.sst.PrefixTombstones;
import java.util.ArrayList;
import java.util.List;

/**
 * Answers "which prefix tombstone with the highest sequence number covers this key?" for a set of
 * files. Each file's tombstones are scoped: they apply only to keys inside the file's scope (its
 * effective range: key range intersected with its key-group clip).
 *
 * <p>The index references each file's own {@link PrefixTombstones}, built once per file, so that
 * building it costs one entry per file holding tombstones, however many tombstones they hold. Files
 * come in runs: an overlapping run (level 0, or a compaction's first input level 0) is searched
 * file by file; a sorted run (scopes ascending and disjoint, as in a level >= 1) is
 * binary-searched, so a lookup reads at most one file of it.
 *
 * <p>Thread safety: immutable after construction. Lookups allocate nothing.
 */
public final class TombstoneIndex {

    public static final TombstoneIndex EMPTY = new TombstoneIndex(List.of());

    /** Files of one run that hold tombstones; sorted runs keep their scopes' order. */
    private record Run(boolean sorted, PrefixTombstones[] sets, KeyRange[] scopes) {}

    private final Run[] runs;

    private TombstoneIndex(List<Run> runs) {
        this.runs = runs.toArray(new Run[0]);
    }

    /** Collects runs of files; files without tombstones are left out. */
    public static final class Builder {
        private final List<Run> runs = new ArrayList<>();

        /** Files whose scopes may overlap each other, in any order. */
        public Builder addOverlapping(List<PrefixTombstones> sets, List<KeyRange> scopes) {
            return add(false, sets, scopes);
        }

        /** Files whose scopes are ascending and pairwise disjoint. */
        public Builder addSorted(List<PrefixTombstones> sets, List<KeyRange> scopes) {
            return add(true, sets, scopes);
        }

        private Builder add(boolean sorted, List<PrefixTombstones> sets, List<KeyRange> scopes) {
            if (sets.size() != scopes.size()) {
                throw new IllegalArgumentException(
                        sets.size() + " tombstone sets for " + scopes.size() + " scopes");
            }
            List<PrefixTombstones> s = new ArrayList<>();
            List<KeyRange> r = new ArrayList<>();
            for (int i = 0; i < sets.size(); i++) {
                if (!sets.get(i).isEmpty() && !scopes.get(i).isEmpty()) {
                    s.add(sets.get(i));
                    r.add(scopes.get(i));
                }
            }
            if (!s.isEmpty()) {
                runs.add(
                        new Run(
                                sorted,
                                s.toArray(new PrefixTombstones[0]),
                                r.toArray(new KeyRange[0])));
            }
            return this;
        }

        public TombstoneIndex build() {
            return runs.isEmpty() ? EMPTY : new TombstoneIndex(runs);
        }
    }

    public boolean isEmpty() {
        return runs.length == 0;
    }

    /** The highest sequence number of a tombstone covering {@code key}, or 0. */
    public long coveringSeq(byte[] key) {
        return coveringSeq(key, 0);
    }

    /**
     * As {@link #coveringSeq(byte[])}, but only files holding a tombstone newer than {@code seq}
     * are read: the result is greater than {@code seq} exactly when a tombstone newer than {@code
     * seq} covers {@code key}.
     */
    public long coveringSeq(byte[] key, long seq) {
        long best = 0;
        for (Run run : runs) {
            if (run.sorted) {
                int i = lastStartingAtOrBefore(run.scopes, key);
                if (i >= 0) {
                    best = Math.max(best, covering(run, i, key, seq));
                }
            } else {
                for (int i = 0; i < run.sets.length; i++) {
                    best = Math.max(best, covering(run, i, key, seq));
                }
            }
        }
        return best;
    }

    private static long covering(Run run, int i, byte[] key, long seq) {
        PrefixTombstones set = run.sets[i];
        if (set.maxSeq() <= seq || !run.scopes[i].contains(key)) {
            return 0;
        }
        return set.coveringSeq(key);
    }

    /** The last index whose scope starts at or before {@code key}, or -1. */
    private static int lastStartingAtOrBefore(KeyRange[] scopes, byte[] key) {
        int lo = 0;
        int hi = scopes.length - 1;
        int found = -1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (Bytes.compare(scopes[mid].lower(), key) <= 0) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return found;
    }
}
