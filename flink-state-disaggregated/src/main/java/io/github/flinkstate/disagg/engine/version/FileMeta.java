package io.github.flinkstate.disagg.engine.version;

import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.key.KeyRange;
import io.github.flinkstate.disagg.engine.sst.PrefixTombstone;
import io.github.flinkstate.disagg.engine.sst.PrefixTombstones;
import io.github.flinkstate.disagg.engine.sst.SstFooter;
import java.util.List;

/**
 * What a store knows about one SST file: where it is, what its footer says, and the key-group clip
 * this store applies to it at read time.
 *
 * <p>Thread safety: immutable except for the reference count, which only {@link VersionSet} touches
 * under its lock.
 *
 * <p>Invariants:
 *
 * <ol>
 *   <li>{@code clip} is a subset of the owning store's key-group span.
 *   <li>{@link #effectiveRange()} = {@code range} ∩ key range of {@code clip}; it is what reads,
 *       overlap checks and compactions use.
 *   <li>{@code refs} = number of live versions that list this file. Entries of one file that share
 *       a counter (a copy of a file that arrived through several handles, one entry per clip, see
 *       {@link #copiedTo(String, RefCount)}) count together: the sum over them.
 * </ol>
 *
 * @param path full URI of the file (it may live in another store's directory)
 * @param fileSize exact size in bytes, used to detect truncation
 * @param range key range declared in the footer
 * @param keyGroups key groups present in the file (footer)
 * @param clip key groups this store reads from the file
 * @param entries entry count (puts and point deletes)
 * @param minSeq smallest sequence number in the file
 * @param maxSeq largest sequence number in the file
 * @param tombstones the file's prefix tombstones (copied into the manifest), indexed once
 * @param createdHere true when this store instance wrote the file
 */
public record FileMeta(
        String path,
        long fileSize,
        KeyRange range,
        KeyGroupSpan keyGroups,
        KeyGroupSpan clip,
        long entries,
        long minSeq,
        long maxSeq,
        PrefixTombstones tombstones,
        boolean createdHere,
        RefCount refs) {

    /** Mutable reference counter; guarded by the owning {@link VersionSet}'s lock. */
    public static final class RefCount {
        int count;

        public int get() {
            return count;
        }
    }

    /** Metadata of a file this store just wrote; its clip is exactly its key groups. */
    public static FileMeta fromFooter(
            String path, long size, SstFooter f, List<PrefixTombstone> tombstones) {
        return new FileMeta(
                path,
                size,
                f.range(),
                f.keyGroups(),
                f.keyGroups(),
                f.entries(),
                f.minSeq(),
                f.maxSeq(),
                PrefixTombstones.of(tombstones),
                true,
                new RefCount());
    }

    /** The key range actually read from this file (footer range clipped to the key groups). */
    public KeyRange effectiveRange() {
        if (clip.isEmpty()) {
            return new KeyRange(range.lower(), range.lower());
        }
        return range.intersect(KeyRange.of(clip));
    }

    /** A copy clipped further to {@code span}, as a foreign (not created here) file. */
    public FileMeta restoredWithClip(KeyGroupSpan span) {
        return new FileMeta(
                path,
                fileSize,
                range,
                keyGroups,
                clip.intersect(span).intersect(keyGroups),
                entries,
                minSeq,
                maxSeq,
                tombstones,
                false,
                new RefCount());
    }

    /** The same file found at another path (a moved or copied file); refs start at zero. */
    public FileMeta withPath(String newPath) {
        if (newPath.equals(path)) {
            return this;
        }
        return new FileMeta(
                newPath,
                fileSize,
                range,
                keyGroups,
                clip,
                entries,
                minSeq,
                maxSeq,
                tombstones,
                createdHere,
                new RefCount());
    }

    /** An identical copy of this file at {@code newPath}, written by this store. */
    public FileMeta copiedTo(String newPath) {
        return copiedTo(newPath, new RefCount());
    }

    /**
     * As {@link #copiedTo(String)}, counting references with {@code refs}: the entries of one copy
     * share one counter, so the copy becomes obsolete (and is deleted) only when no live version
     * lists any of them.
     */
    public FileMeta copiedTo(String newPath, RefCount refs) {
        return new FileMeta(
                newPath,
                fileSize,
                range,
                keyGroups,
                clip,
                entries,
                minSeq,
                maxSeq,
                tombstones,
                true,
                refs);
    }

    /** True when the clip hides part of the file's key groups (compaction should rewrite it). */
    public boolean isClipped() {
        return !clip.equals(keyGroups);
    }

    @Override
    public String toString() {
        return "FileMeta{"
                + path
                + ", "
                + fileSize
                + "B, "
                + effectiveRange()
                + ", clip="
                + clip
                + ", seq=["
                + minSeq
                + ","
                + maxSeq
                + "]}";
    }
}
