package io.github.flinkstate.disagg.engine.compaction;

import io.github.flinkstate.disagg.engine.key.Bytes;
import io.github.flinkstate.disagg.engine.key.KeyRange;
import io.github.flinkstate.disagg.engine.version.FileMeta;
import io.github.flinkstate.disagg.engine.version.Version;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;
import java.util.function.ToLongFunction;

/**
 * Chooses the next compaction with a leveled policy (see docs/disaggregated-engine.md for why).
 *
 * <ol>
 *   <li>Score of L0 = file count / {@code l0Trigger}; score of Ln (n >= 1) = bytes / target(n) with
 *       target(n) = {@code levelBaseBytes * multiplier^(n-1)}. The last level is never a source.
 *   <li>The highest score >= 1 wins. L0 compacts all its files plus the overlapping L1 files; Ln
 *       compacts one file (round-robin by key via a compaction pointer) plus the overlapping files
 *       of Ln+1. A single Ln file with no overlap below and no clip is moved, not rewritten.
 *   <li>With no scored work, a file whose key-group clip hides data (restored from a foreign
 *       snapshot) is rewritten in place to drop the out-of-range keys.
 *   <li>With nothing else to do and a periodic compaction time set, the oldest file that has been
 *       live for at least that long is rewritten in place (an L0 file: all of L0 into L1), so that
 *       the compaction filter sees data that no other compaction would touch.
 * </ol>
 *
 * <p>Thread safety: not thread-safe; used by the single compaction thread (the pointers are its
 * private state), except {@link #hasAgedFile}, which reads only immutable state and may be called
 * from any thread.
 */
public final class LeveledCompactionPicker {

    private final int l0Trigger;
    private final long levelBaseBytes;
    private final int multiplier;
    private final byte[][] pointers;
    private final LongSupplier periodicMillis;
    private final ToLongFunction<FileMeta> ageMillis;

    public LeveledCompactionPicker(
            int numLevels, int l0Trigger, long levelBaseBytes, int multiplier) {
        this(numLevels, l0Trigger, levelBaseBytes, multiplier, () -> 0, f -> 0);
    }

    /**
     * @param periodicMillis files live for at least this long are rewritten when there is nothing
     *     else to do; 0 = never (read at every pick)
     * @param ageMillis how long a file has been live in the store
     */
    public LeveledCompactionPicker(
            int numLevels,
            int l0Trigger,
            long levelBaseBytes,
            int multiplier,
            LongSupplier periodicMillis,
            ToLongFunction<FileMeta> ageMillis) {
        this.l0Trigger = l0Trigger;
        this.levelBaseBytes = levelBaseBytes;
        this.multiplier = multiplier;
        this.pointers = new byte[numLevels][];
        this.periodicMillis = periodicMillis;
        this.ageMillis = ageMillis;
    }

    /** The next compaction for version {@code v}, or null if nothing needs doing. */
    public Compaction pick(Version v) {
        int last = v.numLevels() - 1;
        int best = -1;
        double bestScore = 1.0;
        for (int l = 0; l < last; l++) {
            double score =
                    l == 0
                            ? (double) v.level(0).size() / l0Trigger
                            : (double) v.levelBytes(l) / targetBytes(l);
            if (score >= bestScore) {
                bestScore = score;
                best = l;
            }
        }
        if (best == 0) {
            return build(v, 0, new ArrayList<>(v.level(0)));
        }
        if (best > 0) {
            return build(v, best, List.of(pickFile(v, best)));
        }
        Compaction cleanup = pickClipCleanup(v);
        return cleanup != null ? cleanup : pickAged(v);
    }

    /** The oldest file live for at least the periodic compaction time, or null. */
    FileMeta oldestAged(Version v) {
        long period = periodicMillis.getAsLong();
        if (period <= 0) {
            return null;
        }
        FileMeta oldest = null;
        long oldestAge = -1;
        for (FileMeta f : v.allFiles()) {
            long age = ageMillis.applyAsLong(f);
            if (age >= period && age > oldestAge) {
                oldest = f;
                oldestAge = age;
            }
        }
        return oldest;
    }

    /** Whether some file waits for a periodic compaction. */
    public boolean hasAgedFile(Version v) {
        return oldestAged(v) != null;
    }

    private Compaction pickAged(Version v) {
        FileMeta f = oldestAged(v);
        return f == null ? null : pickRewrite(v, f.path());
    }

    /** A compaction of everything down to the bottom, level by level (used by compactAll). */
    public Compaction pickForced(Version v, int level) {
        if (v.level(level).isEmpty() || level >= v.numLevels() - 1) {
            return null;
        }
        return build(v, level, new ArrayList<>(v.level(level)));
    }

    /**
     * A rewrite of the live file {@code path} into its own level (so that every entry passes the
     * compaction filter), or null when the file is no longer live. A file live twice (two clips
     * after a rescale) is rewritten one entry at a time: the first found.
     */
    public Compaction pickRewrite(Version v, String path) {
        for (int l = 0; l < v.numLevels(); l++) {
            for (FileMeta f : v.level(l)) {
                if (f.path().equals(path)) {
                    if (l == 0) {
                        // L0 files overlap: rewrite them all together into L1 instead
                        return v.numLevels() > 1 ? build(v, 0, new ArrayList<>(v.level(0))) : null;
                    }
                    KeyRange r = f.effectiveRange();
                    return new Compaction(
                            l, l, List.of(f), List.of(), r, !v.overlapsBelow(l, r), false);
                }
            }
        }
        return null;
    }

    long targetBytes(int level) {
        long t = levelBaseBytes;
        for (int i = 1; i < level; i++) {
            t *= multiplier;
        }
        return t;
    }

    private FileMeta pickFile(Version v, int level) {
        List<FileMeta> files = v.level(level);
        byte[] p = pointers[level];
        FileMeta chosen = files.get(0);
        if (p != null) {
            for (FileMeta f : files) {
                if (Bytes.compare(f.effectiveRange().lower(), p) >= 0) {
                    chosen = f;
                    break;
                }
            }
        }
        byte[] limit = chosen.effectiveRange().limit();
        pointers[level] = limit;
        return chosen;
    }

    private Compaction build(Version v, int level, List<FileMeta> inputs) {
        KeyRange range = union(inputs);
        List<FileMeta> next = v.overlapping(level + 1, range);
        KeyRange all = union(range, next);
        boolean bottom = !v.overlapsBelow(level + 1, all);
        boolean trivial =
                level > 0 && inputs.size() == 1 && next.isEmpty() && !inputs.get(0).isClipped();
        return new Compaction(level, level + 1, inputs, next, all, bottom, trivial);
    }

    private Compaction pickClipCleanup(Version v) {
        for (int l = 1; l < v.numLevels(); l++) {
            for (FileMeta f : v.level(l)) {
                if (f.isClipped()) {
                    KeyRange r = f.effectiveRange();
                    return new Compaction(
                            l, l, List.of(f), List.of(), r, !v.overlapsBelow(l, r), false);
                }
            }
        }
        for (FileMeta f : v.level(0)) {
            if (f.isClipped() && v.numLevels() > 1) {
                return build(v, 0, new ArrayList<>(v.level(0)));
            }
        }
        return null;
    }

    static KeyRange union(List<FileMeta> files) {
        KeyRange r = null;
        for (FileMeta f : files) {
            r = r == null ? f.effectiveRange() : span(r, f.effectiveRange());
        }
        return r;
    }

    private static KeyRange union(KeyRange r, List<FileMeta> files) {
        for (FileMeta f : files) {
            r = span(r, f.effectiveRange());
        }
        return r;
    }

    private static KeyRange span(KeyRange a, KeyRange b) {
        byte[] lo = Bytes.compare(a.lower(), b.lower()) <= 0 ? a.lower() : b.lower();
        return new KeyRange(lo, Bytes.maxLimit(a.limit(), b.limit()));
    }
}
