package io.github.flinkstate.disagg.engine.version;

import io.github.flinkstate.disagg.engine.iterator.TombstoneIndex;
import io.github.flinkstate.disagg.engine.key.Bytes;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.key.KeyRange;
import io.github.flinkstate.disagg.engine.sst.PrefixTombstones;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/**
 * An immutable set of live files per level, as seen by readers at one point in time.
 *
 * <p>Thread safety: immutable; the reference count is guarded by the {@link VersionSet} lock. A
 * reader must hold a reference (acquire/release through the version set) while it reads, so the
 * files cannot be deleted underneath it.
 *
 * <p>Invariants (checked by {@link #checkInvariants}):
 *
 * <ol>
 *   <li>Level 0 files may overlap each other; conflicts are resolved by sequence number. They are
 *       ordered by largest sequence number, newest first ({@code VersionSet} sorts them), so that a
 *       get can stop at the first file holding its key.
 *   <li>In every level >= 1, files are sorted by effective lower key and their effective ranges are
 *       pairwise disjoint.
 *   <li>Every file's clip lies in the store's key-group span and its effective range is not empty.
 *   <li>A file appears at most once in a version.
 * </ol>
 */
public final class Version {

    private final List<List<FileMeta>> levels;

    /**
     * {@code ranges[l][i]} = effective range of file i of level l, computed once (reads use it).
     */
    private final KeyRange[][] ranges;

    private final TombstoneIndex tombstones;

    /** The paths of all files, for {@link #holds}. */
    private final Set<String> paths = new HashSet<>();

    int refs;

    Version(List<List<FileMeta>> levels) {
        List<List<FileMeta>> copy = new ArrayList<>(levels.size());
        for (List<FileMeta> l : levels) {
            copy.add(Collections.unmodifiableList(new ArrayList<>(l)));
        }
        this.levels = Collections.unmodifiableList(copy);
        this.ranges = new KeyRange[copy.size()][];
        for (int l = 0; l < copy.size(); l++) {
            List<FileMeta> files = copy.get(l);
            ranges[l] = new KeyRange[files.size()];
            for (int i = 0; i < files.size(); i++) {
                ranges[l][i] = files.get(i).effectiveRange();
            }
        }
        TombstoneIndex.Builder b = new TombstoneIndex.Builder();
        for (int l = 0; l < copy.size(); l++) {
            List<PrefixTombstones> sets = new ArrayList<>(copy.get(l).size());
            copy.get(l).forEach(f -> sets.add(f.tombstones()));
            List<KeyRange> scopes = Arrays.asList(ranges[l]);
            if (l == 0) {
                b.addOverlapping(sets, scopes);
            } else {
                b.addSorted(sets, scopes); // invariant 2
            }
        }
        this.tombstones = b.build();
        copy.forEach(l -> l.forEach(f -> paths.add(f.path())));
    }

    /** Whether a file of this version has the path {@code path}; O(1). */
    public boolean holds(String path) {
        return paths.contains(path);
    }

    public int numLevels() {
        return levels.size();
    }

    public List<FileMeta> level(int i) {
        return levels.get(i);
    }

    public List<List<FileMeta>> levels() {
        return levels;
    }

    public TombstoneIndex tombstones() {
        return tombstones;
    }

    public List<FileMeta> allFiles() {
        List<FileMeta> out = new ArrayList<>();
        levels.forEach(out::addAll);
        return out;
    }

    public long levelBytes(int i) {
        long sum = 0;
        for (FileMeta f : levels.get(i)) {
            sum += f.fileSize();
        }
        return sum;
    }

    /**
     * The effective range of file {@code index} of {@code level} (cached {@link
     * FileMeta#effectiveRange()}).
     */
    public KeyRange effectiveRange(int level, int index) {
        return ranges[level][index];
    }

    /**
     * Files of a level whose effective range overlaps {@code range}, in level order. Level 0 is
     * scanned; sorted levels are binary-searched (invariant 2), so a scan of a small range costs
     * O(log files) per level instead of one comparison per file.
     */
    public List<FileMeta> overlapping(int level, KeyRange range) {
        List<FileMeta> files = levels.get(level);
        KeyRange[] rs = ranges[level];
        List<FileMeta> out = new ArrayList<>();
        int from = 0;
        if (level > 0) {
            // first file whose range ends after range.lower (limits ascend in a sorted level)
            int hi = rs.length;
            while (from < hi) {
                int mid = (from + hi) >>> 1;
                if (Bytes.lessThanLimit(range.lower(), rs[mid].limit())) {
                    hi = mid;
                } else {
                    from = mid + 1;
                }
            }
        }
        for (int i = from; i < rs.length; i++) {
            if (level > 0 && !Bytes.lessThanLimit(rs[i].lower(), range.limit())) {
                break;
            }
            if (rs[i].overlaps(range)) {
                out.add(files.get(i));
            }
        }
        return out;
    }

    /** The file of a sorted level (>= 1) whose effective range contains key, or null. */
    public FileMeta fileContaining(int level, byte[] key) {
        KeyRange[] rs = ranges[level];
        int lo = 0;
        int hi = rs.length - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            KeyRange r = rs[mid];
            if (Bytes.compare(key, r.lower()) < 0) {
                hi = mid - 1;
            } else if (!Bytes.lessThanLimit(key, r.limit())) {
                lo = mid + 1;
            } else {
                return levels.get(level).get(mid);
            }
        }
        return null;
    }

    /** True when some level below {@code level} has a file overlapping {@code range}. */
    public boolean overlapsBelow(int level, KeyRange range) {
        for (int l = level + 1; l < levels.size(); l++) {
            if (!overlapping(l, range).isEmpty()) {
                return true;
            }
        }
        return false;
    }

    public void checkInvariants(KeyGroupSpan storeSpan) {
        Set<FileMeta> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (int l = 0; l < levels.size(); l++) {
            List<FileMeta> files = levels.get(l);
            for (int i = 0; i < files.size(); i++) {
                FileMeta f = files.get(i);
                check(seen.add(f), "file twice: " + f);
                check(
                        !f.clip().isEmpty() && storeSpan.intersect(f.clip()).equals(f.clip()),
                        "clip outside store span: " + f);
                check(!f.effectiveRange().isEmpty(), "empty effective range: " + f);
                if (l > 0 && i > 0) {
                    KeyRange prev = files.get(i - 1).effectiveRange();
                    KeyRange cur = f.effectiveRange();
                    check(
                            prev.limit() != null && Bytes.compare(prev.limit(), cur.lower()) <= 0,
                            "L" + l + " overlap/order: " + files.get(i - 1) + " vs " + f);
                }
            }
        }
    }

    static void check(boolean ok, String msg) {
        if (!ok) {
            throw new IllegalStateException("Version invariant violated: " + msg);
        }
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("Version{");
        for (int l = 0; l < levels.size(); l++) {
            if (!levels.get(l).isEmpty()) {
                sb.append(" L").append(l).append('=').append(levels.get(l).size());
            }
        }
        return sb.append(" }").toString();
    }
}
