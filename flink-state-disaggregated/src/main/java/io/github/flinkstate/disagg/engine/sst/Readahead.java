package io.github.flinkstate.disagg.engine.sst;

import io.github.flinkstate.disagg.engine.cache.CachedFile;
import java.io.IOException;

/**
 * Sequential readahead of one iterator over one SST file: when the iterator reads the file's data
 * blocks in order, a block that is in neither cache is fetched together with the blocks after it, a
 * window of consecutive blocks in ONE read of the primary storage, and the next blocks are served
 * from that window. So a compaction, or a long scan, pays one round trip per window (up to {@code
 * maxWindowBytes}) instead of one per block.
 *
 * <p>Two kinds:
 *
 * <ul>
 *   <li><b>Compaction</b>: windows of {@code maxWindowBytes} from the first block on, read on the
 *       file's compaction stream and paced by the compaction's {@link IoRateLimiter}. Blocks
 *       already in the memory cache, or in the disk tier, are taken without marking them used (nor
 *       making their disk unit recent); nothing read is put into the memory cache or the disk tier
 *       (the file is about to become obsolete).
 *   <li><b>Scan</b>: the first {@link #SCAN_TRIGGER_BLOCKS} - 1 blocks after a seek are read as
 *       point reads (through the block cache, on the shared pool), so short scans behave exactly as
 *       before; from the {@link #SCAN_TRIGGER_BLOCKS}-th block in a row on, windows are fetched on
 *       the file's scan stream, starting at {@link #FIRST_SCAN_WINDOW_BYTES} and doubling up to
 *       {@code maxWindowBytes}, so a scan that ends soon over-reads little. Blocks it uses are
 *       inserted into the memory cache (with a clear reference bit, like any block read once) and
 *       offered to the disk tier, as point reads do.
 * </ul>
 *
 * <p>A window never extends past the block holding the iterator's upper bound (a scan's range or a
 * file's effective range), so a bounded scan or a clipped file is not read beyond what it needs.
 *
 * <p>Every block served from a window is CRC32C-checked (and decompressed) on its way out, exactly
 * as a block read on its own; a corrupt block fails the iterator with the same message (file and
 * block offset) as today. A window is read only when the disk tier holds no verified copy of the
 * block. Memory: one window (at most {@code maxWindowBytes}, or one block if larger) per iterator,
 * dropped when the iterator seeks elsewhere or closes.
 *
 * <p>Thread safety: not thread-safe; owned by one {@link SstIterator}.
 */
final class Readahead {

    /** Blocks a scan reads in a row before readahead starts (the last of them is read ahead). */
    static final int SCAN_TRIGGER_BLOCKS = 3;

    /** The first window of a scan (or {@code maxWindowBytes} if smaller). */
    static final int FIRST_SCAN_WINDOW_BYTES = 64 << 10;

    private final SstReader reader;
    private final boolean compaction;
    private final int maxWindowBytes;
    private final IoRateLimiter limiter;

    /** Null, or the exclusive upper bound of the keys the iterator reads. */
    private final byte[] limit;

    /**
     * Windows never extend past this block (the last one {@link #limit} lets the iterator reach);
     * found at the first fetch, so a short scan that never reads ahead never searches the index for
     * its bound. {@link #UNKNOWN} until then.
     */
    private int lastUseful = UNKNOWN;

    private static final int UNKNOWN = -1;

    /** The block read last, -1 before the first. */
    private int lastBlock = -1;

    /** Blocks read in a row, ending with {@link #lastBlock}. */
    private int run;

    private int nextWindowBytes;

    /** Null, or the stored bytes of blocks {@code [windowFirst, windowLast]} from windowStart. */
    private byte[] window;

    private long windowStart;
    private int windowFirst;
    private int windowLast = -1;

    private Readahead(
            SstReader reader,
            boolean compaction,
            int maxWindowBytes,
            IoRateLimiter limiter,
            byte[] limit) {
        this.reader = reader;
        this.compaction = compaction;
        this.maxWindowBytes = maxWindowBytes;
        this.limiter = limiter;
        this.limit = limit;
    }

    /** {@code limit}: null, or the exclusive upper bound of the keys the scan reads. */
    static Readahead forScan(SstReader reader, int maxWindowBytes, byte[] limit) {
        return new Readahead(reader, false, maxWindowBytes, null, limit);
    }

    /** {@code limit}: null, or the exclusive upper bound of the keys the compaction reads. */
    static Readahead forCompaction(
            SstReader reader, int maxWindowBytes, IoRateLimiter limiter, byte[] limit) {
        return new Readahead(reader, true, maxWindowBytes, limiter, limit);
    }

    /** The verified payload of data block {@code i}, the iterator's next block to read. */
    byte[] payload(int i) throws IOException {
        boolean sequential = lastBlock >= 0 && i == lastBlock + 1;
        lastBlock = i;
        if (sequential) {
            run++;
        } else {
            run = 1;
            drop();
            nextWindowBytes =
                    compaction ? maxWindowBytes : Math.min(FIRST_SCAN_WINDOW_BYTES, maxWindowBytes);
        }
        if (!compaction && run < SCAN_TRIGGER_BLOCKS) {
            return reader.payload(i);
        }
        CachedFile cached = reader.cachedFile();
        byte[] payload = compaction ? cached.peek(i) : cached.lookup(i);
        if (payload != null) {
            return payload;
        }
        if (window == null || i < windowFirst || i > windowLast) {
            byte[] local = reader.localStored(i, !compaction);
            if (local != null) {
                return keep(i, reader.payloadAt(local, 0, i));
            }
            fetch(i);
        }
        int at = (int) (reader.block(i).offset() - windowStart);
        payload = reader.payloadAt(window, at, i);
        if (!compaction) {
            reader.offerToDisk(i, window, at);
        }
        return keep(i, payload);
    }

    private byte[] keep(int i, byte[] payload) {
        return compaction ? payload : reader.cachedFile().insert(i, payload);
    }

    /** Reads the window that starts with block {@code first}. */
    private void fetch(int first) throws IOException {
        drop();
        if (lastUseful == UNKNOWN) {
            lastUseful = reader.lastBlockBelow(limit);
        }
        long start = reader.block(first).offset();
        int last = first;
        while (last + 1 <= lastUseful
                && last + 1 < reader.blockCount()
                && reader.block(last + 1).end() - start <= nextWindowBytes) {
            last++;
        }
        int length = (int) (reader.block(last).end() - start);
        if (limiter != null) {
            limiter.acquire(length);
        }
        window = reader.readSequential(compaction, start, length);
        windowStart = start;
        windowFirst = first;
        windowLast = last;
        nextWindowBytes = (int) Math.min(maxWindowBytes, 2L * nextWindowBytes);
    }

    /** Forgets the window (seek elsewhere, iterator closed). */
    void drop() {
        window = null;
        windowLast = -1;
    }

    /** Blocks in the current window (for tests). */
    int windowBlocks() {
        return window == null ? 0 : windowLast - windowFirst + 1;
    }
}
