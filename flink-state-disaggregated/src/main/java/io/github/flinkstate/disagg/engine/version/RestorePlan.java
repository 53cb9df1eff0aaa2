package io.github.flinkstate.disagg.engine.version;

import io.github.flinkstate.disagg.engine.cache.CacheHint;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * The initial level layout of a store opened from one or several snapshot manifests, with every
 * file clipped to the new store's key groups at read time (no data is read or rewritten).
 *
 * <p>Rules:
 *
 * <ol>
 *   <li>Each manifest's span, intersected with the new span, must be disjoint from the others'
 *       (otherwise {@link IllegalArgumentException}).
 *   <li>Each file keeps its level; its clip becomes {@code clip ∩ manifest span ∩ new span}; files
 *       whose clip or effective range is empty are left out.
 *   <li>The last sequence number is the maximum over the manifests, so new writes are newer than
 *       everything restored.
 *   <li>The cache hint keeps each manifest's entries for the files kept unclipped (a clipped file
 *       also holds other stores' key groups; the warm-up leaves it to the reads), under their
 *       resolved paths, the manifests' hints {@link CacheHint#interleave interleaved}.
 * </ol>
 *
 * <p>Thread safety: immutable.
 *
 * @param levels files per level (level count = max of the requested and the manifests' counts)
 * @param lastSeq the sequence number to continue from
 * @param hint what the snapshots' caches held of the files kept unclipped; empty if none
 */
public record RestorePlan(List<List<FileMeta>> levels, long lastSeq, CacheHint hint) {

    public static RestorePlan of(List<byte[]> manifests, KeyGroupSpan span, int numLevels)
            throws IOException {
        return of(manifests, span, numLevels, UnaryOperator.identity());
    }

    /**
     * As above; {@code pathResolver} maps each recorded file path to where the file is now. It is
     * called once per file entry kept for {@code span} (not for entries clipped away).
     */
    public static RestorePlan of(
            List<byte[]> manifests,
            KeyGroupSpan span,
            int numLevels,
            UnaryOperator<String> pathResolver)
            throws IOException {
        List<ManifestCodec.Manifest> decoded = new ArrayList<>();
        int levelsWanted = numLevels;
        for (byte[] m : manifests) {
            ManifestCodec.Manifest d = ManifestCodec.decode(m);
            decoded.add(d);
            levelsWanted = Math.max(levelsWanted, d.levels().size());
        }
        List<KeyGroupSpan> used = new ArrayList<>();
        for (ManifestCodec.Manifest d : decoded) {
            KeyGroupSpan s = d.span().intersect(span);
            for (KeyGroupSpan u : used) {
                if (!s.isEmpty() && s.overlaps(u)) {
                    throw new IllegalArgumentException(
                            "manifests overlap in key groups: " + s + " and " + u);
                }
            }
            used.add(s);
        }
        List<List<FileMeta>> levels = new ArrayList<>();
        for (int i = 0; i < levelsWanted; i++) {
            levels.add(new ArrayList<>());
        }
        long seq = 0;
        List<CacheHint> hints = new ArrayList<>();
        for (ManifestCodec.Manifest d : decoded) {
            seq = Math.max(seq, d.lastSeq());
            Map<String, String> unclipped = new HashMap<>(); // recorded path -> resolved path
            KeyGroupSpan clipTo = d.span().intersect(span);
            for (int l = 0; l < d.levels().size(); l++) {
                for (FileMeta f : d.levels().get(l)) {
                    FileMeta r = f.restoredWithClip(clipTo);
                    // resolved only when kept: resolving may write the file back (inlined bytes)
                    if (!r.clip().isEmpty() && !r.effectiveRange().isEmpty()) {
                        FileMeta resolved = r.withPath(pathResolver.apply(f.path()));
                        levels.get(l).add(resolved);
                        if (!r.isClipped()) {
                            unclipped.put(f.path(), resolved.path());
                        }
                    }
                }
            }
            hints.add(d.hint().map(unclipped::get));
        }
        return new RestorePlan(levels, seq, CacheHint.interleave(hints));
    }
}
