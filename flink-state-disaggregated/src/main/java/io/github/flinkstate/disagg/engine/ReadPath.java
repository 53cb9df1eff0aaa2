package io.github.flinkstate.disagg.engine;

import io.github.flinkstate.disagg.engine.cache.RowCache;
import io.github.flinkstate.disagg.engine.iterator.BoundedIterator;
import io.github.flinkstate.disagg.engine.iterator.InternalIterator;
import io.github.flinkstate.disagg.engine.iterator.LevelIterator;
import io.github.flinkstate.disagg.engine.iterator.LsmIterator;
import io.github.flinkstate.disagg.engine.iterator.MemtableIterator;
import io.github.flinkstate.disagg.engine.iterator.MergingIterator;
import io.github.flinkstate.disagg.engine.key.Bytes;
import io.github.flinkstate.disagg.engine.key.EntryType;
import io.github.flinkstate.disagg.engine.key.KeyRange;
import io.github.flinkstate.disagg.engine.key.Versioned;
import io.github.flinkstate.disagg.engine.memtable.Memtable;
import io.github.flinkstate.disagg.engine.sst.BloomFilter;
import io.github.flinkstate.disagg.engine.sst.ReaderCache;
import io.github.flinkstate.disagg.engine.version.FileMeta;
import io.github.flinkstate.disagg.engine.version.Version;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.ToIntFunction;

/**
 * Point lookups and scans over one read view (memtables + a pinned {@link Version}).
 *
 * <p>Thread safety: stateless apart from the shared, thread-safe {@link ReaderCache}; a view must
 * stay pinned (version reference held) for as long as a lookup or iterator uses it.
 *
 * <p>Visibility rule: for a key, the entry with the highest sequence number across memtables and
 * files wins; it is visible when it is a put and no prefix tombstone with a higher sequence number
 * covers it (memtable tombstones and the version's {@code TombstoneIndex}).
 */
final class ReadPath {

    /** What a reader sees: memtables newest first, and the version it pinned. */
    record View(List<Memtable> memtables, Version version) {}

    private final ReaderCache readers;
    private final ToIntFunction<byte[]> bloomPrefix;
    private final int readaheadBytes;

    /**
     * @param bloomPrefix null, or the store's {@code LsmOptions.bloomPrefix}
     * @param readaheadBytes the largest readahead window of a scan's file iterators, 0 for none
     */
    ReadPath(ReaderCache readers, ToIntFunction<byte[]> bloomPrefix, int readaheadBytes) {
        this.readers = readers;
        this.bloomPrefix = bloomPrefix;
        this.readaheadBytes = readaheadBytes;
    }

    /**
     * The highest sequence number of a prefix tombstone covering {@code key}; files holding no
     * tombstone newer than {@code seq} are not looked at, so the result exceeds {@code seq} exactly
     * when a newer tombstone covers the key.
     */
    static long coveringSeq(View view, byte[] key, long seq) {
        long best = view.version().tombstones().coveringSeq(key, seq);
        for (Memtable m : view.memtables()) {
            best = Math.max(best, m.coveringTombstoneSeq(key));
        }
        return best;
    }

    byte[] get(View view, byte[] key) throws IOException {
        return get(view, key, null, 0);
    }

    /**
     * The value of {@code key} in {@code view}, with {@code rows} (null for none) in front of the
     * files: it must be the live store's, with {@code rowGeneration} read from it before {@code
     * view} was pinned.
     *
     * <p>A row holds what the files show of the key, tombstones applied: the newest put, or {@link
     * RowCache#ABSENT} for a delete, nothing, or a put a prefix tombstone covers (such a put may
     * vanish with its tombstone in a later compaction, so caching it as a put would outlive both).
     * A hit on a put still applies the tombstones written since.
     */
    byte[] get(View view, byte[] key, RowCache rows, long rowGeneration) throws IOException {
        long keyHash = BloomFilter.hash(key); // once for every memtable and file probed
        Versioned found = null;
        for (Memtable m : view.memtables()) {
            found = m.get(key, keyHash);
            if (found != null) {
                break;
            }
        }
        if (found == null && rows != null) {
            Versioned row = rows.get(key, keyHash);
            if (row == null) {
                Versioned inFiles = getFromFiles(view.version(), key, keyHash);
                row = visible(view, key, inFiles) ? inFiles : RowCache.ABSENT;
                rows.put(key, keyHash, row, rowGeneration);
            }
            return visible(view, key, row) ? row.value() : null; // ABSENT is a delete: not visible
        }
        if (found == null) {
            found = getFromFiles(view.version(), key, keyHash);
        }
        return visible(view, key, found) ? found.value() : null;
    }

    /** Whether {@code found} is a put that no prefix tombstone in {@code view} covers. */
    private static boolean visible(View view, byte[] key, Versioned found) {
        return found != null
                && found.type() == EntryType.PUT
                && coveringSeq(view, key, found.seq()) <= found.seq();
    }

    /**
     * L0 files: highest sequence number wins; a file whose largest sequence number is below the
     * best entry found is not read (L0 is kept newest first, so after a hit the older files are
     * passed over). Deeper levels: first hit from the top wins.
     */
    private Versioned getFromFiles(Version v, byte[] key, long keyHash) throws IOException {
        Versioned best = null;
        List<FileMeta> l0 = v.level(0);
        for (int i = 0; i < l0.size(); i++) {
            FileMeta f = l0.get(i);
            if (best != null && f.maxSeq() < best.seq()) {
                continue; // every entry of f is older than the one found
            }
            if (v.effectiveRange(0, i).contains(key)) {
                Versioned e = readers.get(f.path(), f.fileSize()).get(key, keyHash);
                if (e != null && (best == null || e.seq() > best.seq())) {
                    best = e;
                }
            }
        }
        if (best != null) {
            return best;
        }
        for (int l = 1; l < v.numLevels(); l++) {
            FileMeta f = v.fileContaining(l, key);
            if (f != null) {
                Versioned e = readers.get(f.path(), f.fileSize()).get(key, keyHash);
                if (e != null) {
                    return e;
                }
            }
        }
        return null;
    }

    /** A merged, filtered iterator over {@code r}; {@code onClose} releases the view. */
    LsmIterator scan(View view, KeyRange r, Runnable onClose) throws IOException {
        List<InternalIterator> children = new ArrayList<>();
        byte[] probe = bloomProbe(r);
        long probeHash = probe == null ? 0 : BloomFilter.hash(probe);
        for (Memtable m : view.memtables()) {
            if (probe == null || m.mightContainPrefix(probeHash)) {
                children.add(new MemtableIterator(m));
            }
        }
        Version v = view.version();
        for (FileMeta f : v.overlapping(0, r)) {
            if (mayHold(f, probe, probeHash)) {
                children.add(open(f, r));
            }
        }
        for (int l = 1; l < v.numLevels(); l++) {
            List<FileMeta> overlapping = v.overlapping(l, r);
            List<FileMeta> files = overlapping;
            if (probe != null) {
                files = new ArrayList<>(overlapping.size());
                for (FileMeta f : overlapping) {
                    if (mayHold(f, probe, probeHash)) {
                        files.add(f);
                    }
                }
            }
            List<FileMeta> chosen = files;
            if (!chosen.isEmpty()) {
                List<KeyRange> ranges = new ArrayList<>();
                chosen.forEach(f -> ranges.add(f.effectiveRange()));
                children.add(new LevelIterator(ranges, i -> open(chosen.get(i), r)));
            }
        }
        return new LsmIterator(
                new MergingIterator(children),
                r,
                (k, seq) -> coveringSeq(view, k, seq) > seq,
                onClose);
    }

    /**
     * The prefix to test against the files' bloom filters: {@code r}'s lower bound when {@code r}
     * is exactly the keys starting with it and it is a whole bloom prefix; else null (no file is
     * skipped). Prefix tombstones live in the version's index, not in the files' iterators, so
     * skipping a file never drops a tombstone.
     */
    private byte[] bloomProbe(KeyRange r) {
        if (bloomPrefix == null || r.limit() == null) {
            return null;
        }
        byte[] lower = r.lower();
        if (bloomPrefix.applyAsInt(lower) != lower.length
                || !Arrays.equals(r.limit(), Bytes.prefixLimit(lower))) {
            return null;
        }
        return lower;
    }

    private boolean mayHold(FileMeta f, byte[] probe, long probeHash) throws IOException {
        return probe == null
                || readers.get(f.path(), f.fileSize()).mightContainPrefixHash(probeHash);
    }

    /** The clipped iterator of file {@code f} for a scan of {@code r}. */
    private InternalIterator open(FileMeta f, KeyRange r) throws IOException {
        byte[] limit = Bytes.minLimit(r.limit(), f.effectiveRange().limit());
        return new BoundedIterator(
                readers.get(f.path(), f.fileSize()).iterator(readaheadBytes, limit),
                f.effectiveRange());
    }
}
