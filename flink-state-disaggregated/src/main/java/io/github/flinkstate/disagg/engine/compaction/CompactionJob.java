package io.github.flinkstate.disagg.engine.compaction;

import io.github.flinkstate.disagg.engine.iterator.BoundedIterator;
import io.github.flinkstate.disagg.engine.iterator.InternalIterator;
import io.github.flinkstate.disagg.engine.iterator.LevelIterator;
import io.github.flinkstate.disagg.engine.iterator.MergingIterator;
import io.github.flinkstate.disagg.engine.iterator.TombstoneIndex;
import io.github.flinkstate.disagg.engine.key.Bytes;
import io.github.flinkstate.disagg.engine.key.EntryType;
import io.github.flinkstate.disagg.engine.key.KeyRange;
import io.github.flinkstate.disagg.engine.sst.IoRateLimiter;
import io.github.flinkstate.disagg.engine.sst.PrefixTombstone;
import io.github.flinkstate.disagg.engine.sst.PrefixTombstones;
import io.github.flinkstate.disagg.engine.sst.ReaderCache;
import io.github.flinkstate.disagg.engine.version.FileMeta;
import io.github.flinkstate.disagg.engine.version.VersionEdit;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Executes one {@link Compaction} as a streaming merge: input files are read one block at a time,
 * merged newest-first, filtered, and written to size-bounded output files.
 *
 * <p>Drop rules, applied per key to the newest version (older versions are always dropped):
 *
 * <ol>
 *   <li>Keys outside the inputs' effective ranges (i.e. outside the store's key groups) are never
 *       read, hence dropped.
 *   <li>An entry covered by a prefix tombstone with a higher sequence number is dropped.
 *   <li>A point delete is dropped when the compaction is bottommost; prefix tombstones likewise,
 *       and also when no file below the output level may hold a key they cover ({@link
 *       BelowOutputLevel}). Otherwise they are kept so they still shadow older data in deeper
 *       levels.
 *   <li>A put the {@link CompactionFilter} drops (it sees only puts that survived rules 1-2) is
 *       dropped when the compaction is bottommost, else written as a point delete with the put's
 *       sequence number, so that no older version in a deeper level shows through.
 * </ol>
 *
 * <p>Output files of one compaction are contiguous and disjoint: file i covers {@code [lower_i,
 * lower_{i+1})}; a prefix tombstone spanning a boundary is written into each file it touches and
 * applies only inside each file's range.
 *
 * <p>I/O: each input file is read with readahead (windows of consecutive blocks of up to {@code
 * readaheadBytes}, on the file's compaction stream, bypassing both caches); with a limiter, the
 * window reads of the primary storage and the bytes written are paced by it (writes charged every
 * 64 KiB and at each file's end).
 *
 * <p>Memory: one readahead window per input file being read, one output block, one 8-byte hash per
 * output key for the bloom filter, and the input prefix tombstones.
 *
 * <p>Thread safety: confined to the compaction thread.
 */
public final class CompactionJob {

    private record Carried(byte[] prefix, long seq, KeyRange effective) {}

    private final Compaction c;
    private final ReaderCache readers;
    private final SstOutputs outputs;
    private final long targetFileBytes;
    private final CompactionFilter filter;
    private final int readaheadBytes;
    private final IoRateLimiter limiter;
    private final BelowOutputLevel below;
    private final List<Carried> carried = new ArrayList<>();

    /** Bytes of the current output already charged to the limiter. */
    private long charged;

    private long bytesWritten;
    private long filtered;

    /**
     * @param filter null, or the filter of this run (applied to the newest put of each key)
     */
    public CompactionJob(
            Compaction c,
            ReaderCache readers,
            SstOutputs outputs,
            long targetFileBytes,
            CompactionFilter filter) {
        this(c, readers, outputs, targetFileBytes, filter, 0, null, null);
    }

    /**
     * @param filter null, or the filter of this run (applied to the newest put of each key)
     * @param readaheadBytes the largest read of an input file (consecutive blocks; at least one)
     * @param limiter null, or the pacing of this job's reads of the primary storage and writes
     * @param below null (every prefix tombstone is carried), or the levels below the output level,
     *     asked whether a tombstone still has something to hide
     */
    public CompactionJob(
            Compaction c,
            ReaderCache readers,
            SstOutputs outputs,
            long targetFileBytes,
            CompactionFilter filter,
            int readaheadBytes,
            IoRateLimiter limiter,
            BelowOutputLevel below) {
        this.c = c;
        this.readers = readers;
        this.outputs = outputs;
        this.targetFileBytes = targetFileBytes;
        this.filter = filter;
        this.readaheadBytes = readaheadBytes;
        this.limiter = limiter;
        this.below = below;
    }

    public long bytesWritten() {
        return bytesWritten;
    }

    /** Puts the filter dropped (removed, or replaced by a point delete) in this run. */
    public long filtered() {
        return filtered;
    }

    /** Runs the merge and returns the edit to install. On failure, partial outputs are deleted. */
    public VersionEdit run() throws IOException {
        VersionEdit edit = new VersionEdit();
        for (FileMeta f : c.inputs()) {
            edit.remove(c.level(), f);
        }
        for (FileMeta f : c.nextInputs()) {
            edit.remove(c.outputLevel(), f);
        }
        if (c.trivialMove()) {
            edit.add(c.outputLevel(), c.inputs().get(0));
            return edit;
        }
        List<InternalIterator> children = new ArrayList<>();
        for (FileMeta f : c.inputs()) {
            carryTombstones(f);
            children.add(open(f));
        }
        for (FileMeta f : c.nextInputs()) {
            carryTombstones(f);
        }
        if (!c.nextInputs().isEmpty()) {
            List<KeyRange> ranges = new ArrayList<>();
            c.nextInputs().forEach(f -> ranges.add(f.effectiveRange()));
            children.add(new LevelIterator(ranges, i -> open(c.nextInputs().get(i))));
        }
        carried.sort((a, b) -> Bytes.compare(a.effective.lower(), b.effective.lower()));
        TombstoneIndex tombstones =
                new TombstoneIndex.Builder()
                        .addOverlapping(tombstonesOf(c.inputs()), scopesOf(c.inputs()))
                        .addSorted(tombstonesOf(c.nextInputs()), scopesOf(c.nextInputs()))
                        .build();
        List<FileMeta> produced = new ArrayList<>();
        SstOutputs.Output out = null;
        byte[] lower = null;
        byte[] lastKey = null;
        try (MergingIterator merged = new MergingIterator(children)) {
            merged.seekToFirst();
            while (merged.valid()) {
                outputs.checkNotStopped();
                byte[] key = merged.key();
                long seq = merged.seq();
                byte type = merged.type();
                byte[] value = merged.value();
                do {
                    merged.next();
                } while (merged.valid() && Arrays.equals(merged.key(), key));
                if (tombstones.coveringSeq(key, seq) > seq
                        || (type == EntryType.DELETE && c.bottommost())) {
                    continue;
                }
                if (filter != null && type == EntryType.PUT && filter.drop(key, value)) {
                    filtered++;
                    if (c.bottommost()) {
                        continue;
                    }
                    type = EntryType.DELETE;
                    value = null;
                }
                if (out != null && out.writer().bytesWritten() >= targetFileBytes) {
                    produced.add(finish(out, lower, key));
                    out = null;
                    lower = key;
                }
                if (out == null) {
                    out = outputs.create();
                    charged = 0;
                    if (lower == null) {
                        lower = firstLower(key);
                    }
                }
                out.writer().add(key, seq, type, value);
                lastKey = key;
                chargeWrites(out.writer().bytesWritten());
            }
            if (out == null && !carried.isEmpty()) {
                out = outputs.create();
                charged = 0;
                lower = carried.get(0).effective.lower();
            }
            if (out != null) {
                produced.add(finish(out, lower, lastLimit(lastKey)));
                out = null;
            }
        } catch (IOException | RuntimeException | Error e) {
            // also on an Error: an output left open would keep its local copy's disk reservation
            if (out != null) {
                out.close();
            }
            for (FileMeta f : produced) {
                outputs.deleteQuietly(f);
            }
            throw e;
        }
        for (FileMeta f : produced) {
            edit.add(c.outputLevel(), f);
            bytesWritten += f.fileSize();
        }
        return edit;
    }

    private InternalIterator open(FileMeta f) throws IOException {
        return new BoundedIterator(
                readers.get(f.path(), f.fileSize())
                        .compactionIterator(readaheadBytes, limiter, f.effectiveRange().limit()),
                f.effectiveRange());
    }

    /** Charges the limiter for the current output's bytes, in steps of at least 64 KiB. */
    private void chargeWrites(long written) throws IOException {
        if (limiter != null && written - charged >= WRITE_CHARGE_STEP) {
            limiter.acquire(written - charged);
            charged = written;
        }
    }

    private static final long WRITE_CHARGE_STEP = 64 << 10;

    /**
     * Keeps {@code f}'s tombstones that can cover a key of {@code f} and may still have something
     * to hide below the output level, to write them out again.
     */
    private void carryTombstones(FileMeta f) throws IOException {
        if (c.bottommost()) {
            return; // nothing older exists below
        }
        for (PrefixTombstone t : f.tombstones().list()) {
            KeyRange eff = KeyRange.ofPrefix(t.prefix()).intersect(f.effectiveRange());
            if (!eff.isEmpty() && (below == null || below.mayHold(t.prefix(), eff))) {
                carried.add(new Carried(t.prefix(), t.seq(), eff));
            }
        }
    }

    private static List<PrefixTombstones> tombstonesOf(List<FileMeta> files) {
        List<PrefixTombstones> out = new ArrayList<>(files.size());
        files.forEach(f -> out.add(f.tombstones()));
        return out;
    }

    private static List<KeyRange> scopesOf(List<FileMeta> files) {
        List<KeyRange> out = new ArrayList<>(files.size());
        files.forEach(f -> out.add(f.effectiveRange()));
        return out;
    }

    private byte[] firstLower(byte[] firstKey) {
        byte[] lo = firstKey;
        if (!carried.isEmpty() && Bytes.compare(carried.get(0).effective.lower(), lo) < 0) {
            lo = carried.get(0).effective.lower();
        }
        return lo;
    }

    private byte[] lastLimit(byte[] lastKey) {
        byte[] limit = lastKey == null ? null : Bytes.successor(lastKey);
        boolean seen = lastKey != null;
        for (Carried t : carried) {
            limit = seen ? Bytes.maxLimit(limit, t.effective.limit()) : t.effective.limit();
            seen = true;
        }
        return limit;
    }

    private FileMeta finish(SstOutputs.Output out, byte[] lower, byte[] limit) throws IOException {
        KeyRange bounds = new KeyRange(lower, limit);
        for (Carried t : carried) {
            if (t.effective.overlaps(bounds)) {
                out.addTombstone(t.prefix, t.seq);
            }
        }
        FileMeta f = out.finish(bounds);
        if (limiter != null) {
            try {
                limiter.acquire(f.fileSize() - charged); // the rest: last blocks, index, bloom
            } catch (IOException | RuntimeException | Error e) {
                outputs.deleteQuietly(f); // finished, in no list the caller cleans up yet
                throw e;
            }
        }
        charged = 0;
        return f;
    }
}
