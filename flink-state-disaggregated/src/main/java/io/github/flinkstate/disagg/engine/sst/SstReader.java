package io.github.flinkstate.disagg.engine.sst;

import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.disagg.engine.cache.CachedFile;
import io.github.flinkstate.disagg.engine.cache.DiskCache;
import io.github.flinkstate.disagg.engine.cache.InFlight;
import io.github.flinkstate.disagg.engine.cache.WriteThrough;
import io.github.flinkstate.disagg.engine.key.Versioned;
import java.io.EOFException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import javax.annotation.Nullable;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

/**
 * Reads one SST file in place with positional reads (HDFS's pread on a distributed file system that
 * offers one, a file channel's pread on Flink's local file system, else seek + read) through a
 * Flink {@link FileSystem}; no download of the whole file is ever needed.
 *
 * <p>Opening reads the file's metadata (trailer, footer, index, bloom and tombstone blocks, which
 * the writer puts together at the end of the file) with one read of the file's tail, sized by a
 * hint from the caller (a second read only when the metadata is larger than the hint), and keeps it
 * in memory. When the caller knows the file's size (from the manifest) no status call is made
 * either: a shorter file is reported as truncated by the tail read. Data blocks are read on demand
 * through the shared {@link BlockCache}, in which the reader holds its file's block table open
 * until {@link #close()}; concurrent misses of one block are read once ({@link CachedFile#get}).
 *
 * <p>Thread safety: thread-safe. Point reads and short scans go through a bounded {@link
 * StreamPool} (at most {@code streamsPerFile} streams), so concurrent reads of the file run in
 * parallel on separate streams, each with the stream's positional read on a distributed file system
 * that offers one (HDFS's pread), or a file channel's positional read on the local file system.
 * Sequential readers ({@link Readahead}: compactions, and scans once they proved sequential) read
 * large windows on streams of their own, one for compactions and one for scans, so they never take
 * a stream from a point read: at most {@code streamsPerFile + 2} streams of a file are open. A
 * closed reader keeps working, without caching blocks or keeping streams open, so eviction never
 * breaks an iterator that still holds the reader.
 *
 * <p>Errors: every I/O or format problem is an {@link IOException} whose message names the file
 * path and the offset involved (missing file, truncated file, checksum mismatch). A failed open
 * closes every stream it opened.
 *
 * <p>Invariants:
 *
 * <ol>
 *   <li>The index's last key of data block {@code i} is its last key; strictly increasing.
 *   <li>All metadata blocks passed their CRC32C check.
 * </ol>
 */
public final class SstReader {

    /** Default size of the tail read at open, when the caller gives no better hint. */
    public static final int DEFAULT_TAIL_BYTES = 64 << 10;

    /** Default bound on concurrent reads (open streams) per file. */
    public static final int DEFAULT_STREAMS_PER_FILE = 4;

    private final Path path;
    private final String name;
    private final long fileSize;
    private final StreamPool streams;
    private final StreamPool compactionStream;
    private final StreamPool scanStream;
    private final FileSystem fs;
    private final ReadCounters counters;
    private final SstFooter footer;
    private final int version;
    private final BlockIndex blocks;
    private final BloomFilter bloom;
    private final List<PrefixTombstone> tombstones;
    private final long metadataStart;
    private final CachedFile cached;
    private final BlockCache cache;

    /** What this reader's parsed metadata is charged in the block cache's memory. */
    private final long metadataBytes;

    private final CachedFile.Loader loader = this::readBlock;
    private boolean closed;

    private SstReader(
            FileSystem fs,
            Path path,
            BlockCache cache,
            long expectedSize,
            ReadCounters counters,
            int streamsPerFile,
            long tailBytes)
            throws IOException {
        this.fs = fs;
        this.counters = counters;
        this.path = path;
        this.name = path.toString();
        this.streams = new StreamPool(fs, path, streamsPerFile, true);
        this.compactionStream = new StreamPool(fs, path, 1, false);
        this.scanStream = new StreamPool(fs, path, 1, false);
        boolean opened = false;
        try {
            this.fileSize = expectedSize >= 0 ? expectedSize : statusSize();
            if (fileSize < SstFormat.TRAILER_BYTES) {
                throw error("Truncated SST file: only " + fileSize + " bytes, no trailer", 0, null);
            }
            Metadata m = openMetadata(cache.disk(), tailBytes);
            this.footer = m.footer();
            this.version = m.version();
            this.blocks = m.blocks();
            this.bloom = m.bloom();
            this.tombstones = m.tombstones();
            this.metadataStart = m.metadataStart();
            // refuses a name it knows with another block count: the file changed under its name
            this.cached =
                    cache.open(name, blocks.size(), cache.disk() == null ? null : blocks.offsets());
            opened = true;
        } finally {
            if (!opened) {
                streams.close(); // the metadata read's stream, if it was opened
            }
        }
        this.cache = cache;
        this.metadataBytes = parsedMetadataBytes();
        cache.pinMetadata(metadataBytes);
    }

    /**
     * Approximate heap bytes of the parsed metadata this reader keeps while open: the last key of
     * every block, the block handles, the bloom filter and the prefix tombstones (object headers
     * and references included).
     */
    private long parsedMetadataBytes() {
        long bytes = blocks.heapBytes();
        bytes += bloom == null ? 0 : 16 + bloom.sizeBytes();
        for (PrefixTombstone t : tombstones) {
            bytes += 48 + t.prefix().length;
        }
        return bytes;
    }

    /**
     * Opens a reader.
     *
     * @param expectedSize the size recorded in the manifest, or -1 if unknown
     */
    public static SstReader open(FileSystem fs, Path path, BlockCache cache, long expectedSize)
            throws IOException {
        return open(fs, path, cache, expectedSize, new ReadCounters());
    }

    /** Opens a reader whose reads of the file are counted in {@code counters}. */
    public static SstReader open(
            FileSystem fs, Path path, BlockCache cache, long expectedSize, ReadCounters counters)
            throws IOException {
        return open(
                fs,
                path,
                cache,
                expectedSize,
                counters,
                DEFAULT_STREAMS_PER_FILE,
                DEFAULT_TAIL_BYTES);
    }

    /**
     * Opens a reader.
     *
     * @param expectedSize the size recorded in the manifest, or -1 if unknown (then a status call
     *     gives it)
     * @param streamsPerFile the most concurrent reads (open streams) of the file
     * @param tailBytes how many bytes of the file's end the first read fetches; the metadata is
     *     read in one round trip when it fits
     */
    public static SstReader open(
            FileSystem fs,
            Path path,
            BlockCache cache,
            long expectedSize,
            ReadCounters counters,
            int streamsPerFile,
            long tailBytes)
            throws IOException {
        return new SstReader(fs, path, cache, expectedSize, counters, streamsPerFile, tailBytes);
    }

    public Path path() {
        return path;
    }

    public long fileSize() {
        return fileSize;
    }

    /** The format version read from the trailer. */
    public int formatVersion() {
        return version;
    }

    public SstFooter footer() {
        return footer;
    }

    public List<PrefixTombstone> tombstones() {
        return tombstones;
    }

    public boolean mightContain(byte[] key) {
        return bloom.mightContain(key);
    }

    /**
     * False only when no key of this file starts with {@code prefix}. REQUIRES: {@code prefix} is a
     * whole bloom prefix (the store's bloom prefix function returns its length for it); files
     * written without prefixes in their filter always answer true.
     */
    public boolean mightContainPrefix(byte[] prefix) {
        return mightContainPrefixHash(BloomFilter.hash(prefix));
    }

    /** As {@link #mightContainPrefix} for a prefix whose {@code BloomFilter.hash} is {@code h}. */
    public boolean mightContainPrefixHash(long h) {
        return !footer.bloomHasPrefixes() || bloom.mightContainHash(h);
    }

    public int blockCount() {
        return blocks.size();
    }

    BlockHandle block(int i) {
        return blocks.handle(i);
    }

    /** Index of the first block whose last key is >= key, or blockCount() if none. */
    int findBlock(byte[] key) {
        return blocks.find(key);
    }

    /** The handle of data block {@code i} (its stored length; for tests). */
    BlockHandle blockHandle(int i) {
        return blocks.handle(i);
    }

    /** A cursor over data block {@code i} whose verified payload is {@code payload}. */
    DataBlock.Cursor cursor(int i, byte[] payload) throws IOException {
        return new DataBlock.Cursor(payload, version, name, blocks.offset(i));
    }

    /** As {@link #cursor(int, byte[])}, on the first entry not below {@code target}. */
    DataBlock.Cursor cursorAt(int i, byte[] payload, byte[] target) throws IOException {
        return DataBlock.Cursor.seeking(payload, version, name, blocks.offset(i), target);
    }

    /** The verified payload of data block {@code i}, from the block cache or the file. */
    byte[] payload(int i) throws IOException {
        return cached.get(i, loader);
    }

    /** Reads, verifies and (version 4) decompresses data block {@code i}. */
    private byte[] readBlock(int i) throws IOException {
        BlockHandle h = blocks.handle(i);
        byte[] buf = storedBlock(h);
        if (version < 4) {
            return Arrays.copyOf(buf, h.length());
        }
        // decoded straight from the read buffer: one copy of the payload, not two
        return BlockCompression.decode(buf, h.length(), name, h.offset());
    }

    /**
     * Block {@code h} as stored (payload then CRC32C), verified: from the local disk tier if it
     * holds a copy that verifies, else from the file (then offered to the disk tier). A local copy
     * that fails verification is dropped and never served.
     */
    private byte[] storedBlock(BlockHandle h) throws IOException {
        byte[] local = localCopy(h, true);
        if (local != null) {
            return local;
        }
        byte[] buf = readAt(h.offset(), h.length() + SstFormat.BLOCK_CRC_BYTES);
        checkCrc(buf, 0, h);
        DiskCache disk = cached.disk();
        if (disk != null) {
            disk.offer(name, h.offset(), buf);
        }
        return buf;
    }

    /**
     * Most bytes {@link #copyToDisk} reads at once (unless one block is larger). Small, so that a
     * point read sharing the link with the copy waits for at most one chunk (5 ms at 100 MB/s); the
     * chunks follow each other on the copy's own stream, so they pay the link's latency once, not
     * per chunk.
     */
    static final int COPY_CHUNK_BYTES = 512 << 10;

    /**
     * The most bytes of blocks it does not want that a block fill reads between two it does, in one
     * chunk, rather than end the chunk: at 100 MB/s a 2 ms round trip costs as much as about 200 KB
     * of transfer, so a smaller gap is cheaper read than skipped with another request.
     */
    static final int MAX_GAP_BYTES = 128 << 10;

    /**
     * Copies this file into the local disk tier as a whole-file copy, unless the tier holds one:
     * reads it from the file in chunks of whole data blocks (at most {@link #COPY_CHUNK_BYTES}, or
     * one block if larger) on the scan stream, never a point read's, verifies every data block's
     * CRC32C on the way (the metadata is verified whenever a reader opens the copy), and commits
     * the copy only when all of it was read.
     *
     * @param cancelled checked before each chunk; when it says true the copy is abandoned
     * @param pacing takes each chunk's bytes before the chunk is read, or null (no pacing)
     * @return bytes copied and kept; 0 if the tier already holds the file or the copy was
     *     cancelled; -1 if there is no disk tier or it admits no more whole files, also when the
     *     copy was abandoned part-way (no room, a local failure) without reading the rest
     */
    public long copyToDisk(
            java.util.function.BooleanSupplier cancelled, @Nullable IoRateLimiter pacing)
            throws IOException {
        DiskCache disk = cached.disk();
        if (disk == null) {
            return -1;
        }
        if (disk.holdsWholeFile(name)) {
            return 0;
        }
        WriteThrough copy = disk.writeThrough(name, fileSize);
        if (copy == null) {
            return -1;
        }
        boolean kept = false;
        try {
            long pos = 0;
            int next = 0;
            while (pos < fileSize) {
                if (cancelled.getAsBoolean()) {
                    return 0;
                }
                long end = fileSize;
                int last = next - 1; // past the data blocks: the metadata, in one chunk
                if (next < blocks.size()) {
                    last = lastWantedOfChunk(null, next, pos, COPY_CHUNK_BYTES);
                    end = blocks.end(last);
                }
                byte[] buf = readChunk(pos, end, next, last, null, pacing, cancelled);
                if (buf == null) {
                    return 0; // cancelled while it waited
                }
                next = last + 1;
                copy.write(buf, 0, buf.length);
                if (copy.abandoned()) {
                    return -1; // no room for it as a whole after all: the next file may fit
                }
                pos = end;
            }
            kept = copy.commit(fileSize);
            return kept ? fileSize : 0;
        } finally {
            if (!kept) {
                copy.abort();
            }
        }
    }

    /**
     * Reads {@code [pos, end)} on the scan stream, after taking its bytes from {@code pacing} (if
     * any), and verifies the CRC32C of those of data blocks {@code first} to {@code last} in it
     * (none if {@code last < first}) that {@code verify} marks (all if null: a block the caller
     * leaves out is neither served nor stored, so its damage is not this read's concern); null if
     * {@code stop} said so after the wait for the pacing.
     */
    @Nullable
    private byte[] readChunk(
            long pos,
            long end,
            int first,
            int last,
            @Nullable boolean[] verify,
            @Nullable IoRateLimiter pacing,
            java.util.function.BooleanSupplier stop)
            throws IOException {
        if (pacing != null) {
            pacing.acquire(end - pos);
            if (stop.getAsBoolean()) {
                return null;
            }
        }
        byte[] buf = readAt(scanStream, pos, (int) (end - pos));
        for (int i = first; i <= last; i++) {
            if (verify == null || verify[i]) {
                checkCrc(buf, (int) (blocks.offset(i) - pos), blocks.handle(i));
            }
        }
        return buf;
    }

    /**
     * As {@link #fillDiskWithBlocks(java.util.function.BooleanSupplier, IoRateLimiter, long[],
     * MemoryPart)} for every block.
     */
    public BlockFill fillDiskWithBlocks(
            java.util.function.BooleanSupplier stop, @Nullable IoRateLimiter pacing)
            throws IOException {
        return fillDiskWithBlocks(stop, pacing, null, null);
    }

    /**
     * The blocks a disk fill also loads into the memory tier: those at {@code offsets} (ascending)
     * it reads and the memory tier does not hold, within {@code limitBytes} as the memory tier
     * weighs them (payload and {@link BlockCache#ENTRY_OVERHEAD}) and within what the memory has
     * free at each block (nothing is evicted for them); those of them at {@code onlyOffsets} are
     * not stored on disk once loaded (nor read if the memory tier holds them), and go to disk when
     * they do not fit.
     */
    public record MemoryPart(long[] offsets, long[] onlyOffsets, long limitBytes) {}

    /**
     * Caches this file's data blocks in the local disk tier's free room, block by block (slabs, as
     * a get that misses would), for a warm-up that has no room left for whole files: those at
     * {@code offsets} (offsets that start no block are passed over), or all of them, less those the
     * tier holds already. Reads them in order in chunks of whole blocks (at most {@link
     * #COPY_CHUNK_BYTES}, or one block if larger) on the scan stream: a chunk starts at a wanted
     * block and ends at one, and the blocks between two wanted ones in it, at most {@link
     * #MAX_GAP_BYTES}, are read and left out (cheaper than another round trip). Verifies each
     * wanted block's CRC32C, and offers each without evicting anything ({@link
     * DiskCache#offerIntoFreeRoom}). Sizes each chunk to the free room as it is before the read
     * (reads meanwhile may take some of it: the chunk's last blocks are then read for nothing);
     * passes over blocks larger than the tier stores, and blocks turned away for a passing reason
     * (their slab dropped meanwhile). With a {@link MemoryPart}, the blocks it names are also
     * decompressed and loaded into the memory tier as they pass (in the same reads: a separate pass
     * would read most of the file again), and those it names as the memory tier's only are then not
     * stored on disk.
     *
     * @param stop checked before each chunk (for the warm-up: it was cancelled, the file was
     *     dropped, or anything else evicted)
     * @param pacing takes each chunk's bytes before the chunk is read, or null (no pacing)
     * @param offsets the offsets of the blocks to cache, ascending; null for all
     * @param memory what to load into the memory tier on the way, or null
     * @return the bytes stored and loaded, and why it ended
     */
    public BlockFill fillDiskWithBlocks(
            java.util.function.BooleanSupplier stop,
            @Nullable IoRateLimiter pacing,
            @Nullable long[] offsets,
            @Nullable MemoryPart memory)
            throws IOException {
        DiskCache disk = cached.disk();
        if (disk == null) {
            return new BlockFill(0, BlockFill.End.NOT_TAKEN);
        }
        if (disk.holdsOrExpectsWholeCopy(name)) {
            return new BlockFill(0, BlockFill.End.DONE);
        }
        boolean[] wanted =
                wantedBlocks(disk, offsets, memory == null ? null : memory.onlyOffsets());
        boolean[] toMemory = memory == null ? null : wantedBlocks(null, memory.offsets(), null);
        boolean[] memoryOnly =
                memory == null ? null : wantedBlocks(null, memory.onlyOffsets(), null);
        long stored = 0;
        long loaded = 0;
        int next = nextWanted(wanted, 0);
        while (next < blocks.size()) {
            if (stop.getAsBoolean()) {
                return new BlockFill(stored, loaded, BlockFill.End.STOPPED);
            }
            long pos = blocks.offset(next);
            long first = blocks.end(next) - pos;
            if (first > disk.largestBlockBytes()) {
                // never cached as a block: a read of it goes to the primary
                next = nextWanted(wanted, next + 1);
                continue;
            }
            long room = disk.freeRoomBytes();
            if (first > room) {
                return new BlockFill(stored, loaded, BlockFill.End.FULL);
            }
            int last = lastWantedOfChunk(wanted, next, pos, Math.min(room, COPY_CHUNK_BYTES));
            byte[] buf = readChunk(pos, blocks.end(last), next, last, wanted, pacing, stop);
            if (buf == null) {
                return new BlockFill(stored, loaded, BlockFill.End.STOPPED);
            }
            for (int i = next; i <= last; i++) {
                if (!wanted[i]) {
                    continue;
                }
                int from = (int) (blocks.offset(i) - pos);
                if (toMemory != null && toMemory[i]) {
                    long weight = loadIntoMemory(buf, from, i, memory.limitBytes() - loaded);
                    if (weight > 0) {
                        loaded += weight;
                        if (memoryOnly[i]) {
                            continue; // the memory tier's only: not on disk too
                        }
                    }
                }
                byte[] block = Arrays.copyOfRange(buf, from, (int) (blocks.end(i) - pos));
                switch (disk.offerIntoFreeRoom(name, blocks.offset(i), block)) {
                    case STORED -> stored += block.length;
                    case HELD -> {
                        if (disk.holdsWholeFile(name)) {
                            // copied meanwhile
                            return new BlockFill(stored, loaded, BlockFill.End.DONE);
                        }
                    }
                    case NO_ROOM -> {
                        return new BlockFill(stored, loaded, BlockFill.End.FULL);
                    }
                    case NOT_TAKEN -> {
                        if (!disk.takesWrites() || Thread.currentThread().isInterrupted()) {
                            return new BlockFill(stored, loaded, BlockFill.End.NOT_TAKEN);
                        }
                    }
                }
            }
            next = nextWanted(wanted, last + 1);
        }
        return new BlockFill(stored, loaded, BlockFill.End.DONE);
    }

    /**
     * Makes data block {@code i}, verified and stored at {@code buf[from..]}, resident in the
     * memory tier if it weighs at most {@code limit} and the memory has it free (so that nothing is
     * evicted for it: other stores' warm-ups and the job's reads take from the same memory);
     * returns its weight there, -1 if it does not fit, or 0 if the memory tier refused it (this
     * reader released, or the block larger than the tier takes) or a get had loaded it meanwhile.
     */
    private long loadIntoMemory(byte[] buf, int from, int i, long limit) throws IOException {
        long room = Math.min(limit, cache.memory().freeBytes());
        if (room <= BlockCache.ENTRY_OVERHEAD) {
            return -1;
        }
        byte[] payload = decodedAt(buf, from, i);
        long weight = payload.length + BlockCache.ENTRY_OVERHEAD;
        if (weight > room) {
            return -1;
        }
        if (cached.insert(i, payload) != payload || cached.peek(i) != payload) {
            return 0;
        }
        return weight;
    }

    /**
     * Per data block, whether a fill caches it: it is at one of {@code offsets} (all blocks if
     * null), {@code disk} does not hold it yet (null: no disk fill) and, if it is at one of {@code
     * notIfResident}, the memory tier does not hold it.
     */
    private boolean[] wantedBlocks(
            @Nullable DiskCache disk, @Nullable long[] offsets, @Nullable long[] notIfResident) {
        boolean[] wanted = new boolean[blocks.size()];
        for (int i = 0; i < wanted.length; i++) {
            long at = blocks.offset(i);
            wanted[i] =
                    (offsets == null || Arrays.binarySearch(offsets, at) >= 0)
                            && (disk == null || !disk.holdsBlock(name, at))
                            && (notIfResident == null
                                    || cached.peek(i) == null
                                    || Arrays.binarySearch(notIfResident, at) < 0);
        }
        return wanted;
    }

    /**
     * Loads this file's data blocks at {@code offsets} (ascending; offsets that start no block are
     * passed over) into the memory tier, for a warm-up that restores what the memory tier held:
     * those neither it nor the disk tier holds (a get loads one the disk tier holds from there), in
     * order, in chunks read as {@link #fillDiskWithBlocks} reads them (on the scan stream, blocks
     * in between of at most {@link #MAX_GAP_BYTES} read and left out), each verified (CRC32C) and
     * decompressed, then inserted like a block a get read. Offers nothing to the disk tier. Takes
     * at most {@code limitBytes} as the memory tier weighs blocks (payload and {@link
     * BlockCache#ENTRY_OVERHEAD}): a chunk is sized to what is left, and the fill ends before a
     * block that does not fit.
     *
     * @return the bytes of the blocks it made resident ({@code memoryBytes}; not those a get loaded
     *     meanwhile), and why it ended: {@code FULL} at the limit, {@code NOT_TAKEN} when the
     *     memory tier refused a block (this reader was released, or the block is larger than the
     *     tier takes), {@code STOPPED} when {@code stop} said so before a chunk
     * @throws IOException if a read fails or a block does not verify (the blocks of the chunks
     *     before stay loaded)
     */
    public BlockFill fillMemoryWithBlocks(
            java.util.function.BooleanSupplier stop,
            @Nullable IoRateLimiter pacing,
            long[] offsets,
            long limitBytes)
            throws IOException {
        boolean[] wanted = wantedBlocks(cached.disk(), offsets, offsets);
        long loaded = 0;
        int next = nextWanted(wanted, 0);
        while (next < blocks.size()) {
            if (stop.getAsBoolean()) {
                return new BlockFill(0, loaded, BlockFill.End.STOPPED);
            }
            long pos = blocks.offset(next);
            long room = limitBytes - loaded;
            if (blocks.end(next) - pos + BlockCache.ENTRY_OVERHEAD > room) {
                return new BlockFill(0, loaded, BlockFill.End.FULL);
            }
            int last = lastWantedOfChunk(wanted, next, pos, Math.min(room, COPY_CHUNK_BYTES));
            byte[] buf = readChunk(pos, blocks.end(last), next, last, wanted, pacing, stop);
            if (buf == null) {
                return new BlockFill(0, loaded, BlockFill.End.STOPPED);
            }
            for (int i = next; i <= last; i++) {
                if (!wanted[i]) {
                    continue;
                }
                // verified by readChunk
                long weight =
                        loadIntoMemory(buf, (int) (blocks.offset(i) - pos), i, limitBytes - loaded);
                if (weight < 0) {
                    return new BlockFill(0, loaded, BlockFill.End.FULL);
                }
                if (weight == 0 && cached.peek(i) == null) {
                    return new BlockFill(0, loaded, BlockFill.End.NOT_TAKEN);
                }
                loaded += weight;
            }
            next = nextWanted(wanted, last + 1);
        }
        return new BlockFill(0, loaded, BlockFill.End.DONE);
    }

    /**
     * The last wanted data block of a chunk that starts with wanted block {@code first} at {@code
     * pos} and spans at most {@code limit} bytes, with no gap of more than {@link #MAX_GAP_BYTES}
     * between two wanted blocks in it; {@code first} itself if nothing else fits (also when that
     * block alone is larger). {@code wanted} null: every block is wanted.
     */
    private int lastWantedOfChunk(@Nullable boolean[] wanted, int first, long pos, long limit) {
        int last = first;
        for (int i = first + 1; i < blocks.size() && blocks.end(i) - pos <= limit; i++) {
            if (wanted == null || wanted[i]) {
                if (blocks.offset(i) - blocks.end(last) > MAX_GAP_BYTES) {
                    break;
                }
                last = i;
            }
        }
        return last;
    }

    /** The first wanted block from {@code from} on; the block count if none. */
    private static int nextWanted(boolean[] wanted, int from) {
        int i = from;
        while (i < wanted.length && !wanted[i]) {
            i++;
        }
        return i;
    }

    /**
     * What {@link #fillDiskWithBlocks} or {@link #fillMemoryWithBlocks} did: the bytes it stored,
     * and why it ended.
     */
    public record BlockFill(long bytes, long memoryBytes, End end) {

        /** A fill that loaded nothing into the memory tier. */
        public BlockFill(long bytes, End end) {
            this(bytes, 0, end);
        }

        /** Why a fill ended. */
        public enum End {
            /** Every block was offered, or the tier holds or expects the file whole. */
            DONE,
            /** The disk tier's free room, or the memory fill's limit, is used up. */
            FULL,
            /**
             * The tier takes no more blocks (none, closed, writes paused after a local failure) or
             * the thread was interrupted; blocks stored before count in {@code bytes}.
             */
            NOT_TAKEN,
            /** Its stop condition said so. */
            STOPPED
        }
    }

    /** Point lookup: the entry for exactly {@code key} in this file, or null. */
    public Versioned get(byte[] key) throws IOException {
        return get(key, BloomFilter.hash(key));
    }

    /**
     * As {@link #get(byte[])}, with the key's {@link BloomFilter#hash(byte[])} computed once by a
     * caller that probes several files.
     */
    public Versioned get(byte[] key, long keyHash) throws IOException {
        if (!bloom.mightContainHash(keyHash)) {
            return null;
        }
        int b = findBlock(key);
        if (b >= blocks.size()) {
            return null;
        }
        return DataBlock.get(payload(b), version, key, name, blocks.offset(b));
    }

    /**
     * A new iterator over the whole file (callers bound it), for scans: it reads block by block
     * through the block cache; once it has read {@link Readahead#SCAN_TRIGGER_BLOCKS} blocks in a
     * row it fetches windows of consecutive blocks, growing to {@code readaheadBytes}, on the
     * file's scan stream. {@code readaheadBytes} 0: never.
     *
     * @param limit null, or the exclusive upper bound of the keys the caller will read: windows end
     *     with the block that holds it, so a bounded scan never reads ahead past its range
     */
    public SstIterator iterator(int readaheadBytes, byte[] limit) {
        return new SstIterator(
                this, readaheadBytes > 0 ? Readahead.forScan(this, readaheadBytes, limit) : null);
    }

    /** A new scan iterator without readahead (callers bound it). */
    public SstIterator iterator() {
        return iterator(0, null);
    }

    /**
     * A new iterator for a compaction: reads windows of consecutive blocks of at most {@code
     * readaheadBytes} (at least one block) on the file's compaction stream from the first block on,
     * takes blocks already in the memory cache or the disk tier without marking them used, and puts
     * nothing into either cache (the file is about to become obsolete).
     *
     * @param limiter null, or the pacing of the compaction's reads of the primary storage
     * @param limit null, or the exclusive upper bound of the keys read (windows stop there)
     */
    public SstIterator compactionIterator(int readaheadBytes, IoRateLimiter limiter, byte[] limit) {
        return new SstIterator(
                this, Readahead.forCompaction(this, Math.max(1, readaheadBytes), limiter, limit));
    }

    /**
     * The last data block that may hold a key below {@code limit} (null: no bound): the first block
     * whose last key is at or above it, or the file's last block.
     */
    int lastBlockBelow(byte[] limit) {
        return limit == null ? blocks.size() - 1 : Math.min(findBlock(limit), blocks.size() - 1);
    }

    /**
     * Bytes from the start of the first metadata block (tombstones, bloom, index) to the end of the
     * file: what a tail read must fetch to open the file in one round trip.
     */
    public long metadataBytes() {
        return fileSize - metadataStart;
    }

    /** Point reads of this file served by the file system's positional read (for tests). */
    long positionalReads() {
        return streams.positionalReads();
    }

    /** Streams of this file open right now (idle or in use); 0 after close once reads finished. */
    int openStreams() {
        return streams.openStreams() + compactionStream.openStreams() + scanStream.openStreams();
    }

    /**
     * Closes the streams and gives up the file's block table in the block cache. Idempotent; later
     * reads still work (each on its own short-lived stream, not caching blocks).
     */
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        cache.unpinMetadata(metadataBytes);
        cached.release();
        streams.close();
        compactionStream.close();
        scanStream.close();
    }

    /** Reads a block and verifies its CRC32C; the message of any failure names file and offset. */
    byte[] readVerified(BlockHandle h) throws IOException {
        return Arrays.copyOf(storedBlock(h), h.length());
    }

    private void checkBounds(BlockHandle h) throws IOException {
        if (h.offset() < 0 || h.end() > fileSize) {
            throw error(
                    "Block handle out of file bounds (length "
                            + h.length()
                            + ", file size "
                            + fileSize
                            + ")",
                    h.offset(),
                    null);
        }
    }

    /**
     * The payload of block {@code h} found at {@code buf[at..]} (payload then CRC32C), after its
     * checksum was verified.
     */
    private byte[] verified(byte[] buf, int at, BlockHandle h) throws IOException {
        checkCrc(buf, at, h);
        return Arrays.copyOfRange(buf, at, at + h.length());
    }

    /**
     * Fails, naming file and offset, unless {@code buf[at..]} holds block {@code h} and its CRC.
     */
    private void checkCrc(byte[] buf, int at, BlockHandle h) throws IOException {
        int crcAt = at + h.length();
        int stored =
                ((buf[crcAt] & 0xFF) << 24)
                        | ((buf[crcAt + 1] & 0xFF) << 16)
                        | ((buf[crcAt + 2] & 0xFF) << 8)
                        | (buf[crcAt + 3] & 0xFF);
        int actual = SstFormat.crc32c(buf, at, h.length());
        if (stored != actual) {
            throw error(
                    "Corrupted block (CRC32C mismatch: stored "
                            + Integer.toHexString(stored)
                            + ", computed "
                            + Integer.toHexString(actual)
                            + ", length "
                            + h.length()
                            + ")",
                    h.offset(),
                    null);
        }
    }

    private byte[] readAt(long offset, int len) throws IOException {
        return readAt(streams, offset, len);
    }

    // ------------------------------------------------------------------ for Readahead

    CachedFile cachedFile() {
        return cached;
    }

    /**
     * Bytes {@code [offset, offset + len)} of the file in one read on the compaction or the scan
     * stream (never the point reads' pool); counted as one read of the primary storage.
     */
    byte[] readSequential(boolean compaction, long offset, int len) throws IOException {
        if (offset < 0 || offset + len > fileSize) {
            throw error(
                    "Read of " + len + " bytes past the end (file size " + fileSize + ")",
                    offset,
                    null);
        }
        return readAt(compaction ? compactionStream : scanStream, offset, len);
    }

    /**
     * The payload of data block {@code i} stored at {@code buf[at..]} (payload then CRC32C): its
     * checksum verified, then decompressed (version 4) or copied out.
     */
    byte[] payloadAt(byte[] buf, int at, int i) throws IOException {
        checkCrc(buf, at, blocks.handle(i));
        return decodedAt(buf, at, i);
    }

    /**
     * The payload of data block {@code i} stored at {@code buf[at..]}, whose checksum the caller
     * verified: decompressed (version 4) or copied out.
     */
    private byte[] decodedAt(byte[] buf, int at, int i) throws IOException {
        BlockHandle h = blocks.handle(i);
        if (version < 4) {
            return Arrays.copyOfRange(buf, at, at + h.length());
        }
        return BlockCompression.decode(buf, at, h.length(), name, h.offset());
    }

    /**
     * The local disk tier's copy of data block {@code i} as stored (payload then CRC32C) after it
     * verified, or null (no tier, no copy, or a copy that failed and was dropped). Without {@code
     * use} (a compaction reading its inputs) the tier counts the read as no use of the block.
     */
    byte[] localStored(int i, boolean use) throws IOException {
        return localCopy(blocks.handle(i), use);
    }

    /** {@link #localStored} for block {@code h}; fails if {@code h} is outside the file. */
    private byte[] localCopy(BlockHandle h, boolean use) throws IOException {
        checkBounds(h);
        DiskCache disk = cached.disk();
        if (disk == null) {
            return null;
        }
        try {
            byte[] local = disk.read(name, h.offset(), h.length() + SstFormat.BLOCK_CRC_BYTES, use);
            if (local == null) {
                return null;
            }
            checkCrc(local, 0, h);
            return local;
        } catch (IOException corrupt) {
            disk.invalidate(name, h.offset(), corrupt.getMessage());
            return null;
        } catch (InternalError fault) {
            // a memory-mapped copy's page could not be read, reported late (DiskCache.read
            // handles it when reported in time): its bytes are not used; read the file
            DiskCache.absorbMappedFault(disk, fault);
            disk.invalidate(name, h.offset(), "a mapped page could not be read: " + fault);
            return null;
        }
    }

    /** Offers block {@code i}, verified and stored at {@code buf[at..]}, to the disk tier. */
    void offerToDisk(int i, byte[] buf, int at) {
        DiskCache disk = cached.disk();
        if (disk != null) {
            BlockHandle h = blocks.handle(i);
            disk.offer(
                    name,
                    h.offset(),
                    Arrays.copyOfRange(buf, at, at + h.length() + SstFormat.BLOCK_CRC_BYTES));
        }
    }

    private byte[] readAt(StreamPool pool, long offset, int len) throws IOException {
        byte[] buf = new byte[len];
        try {
            pool.readFully(offset, buf, 0, len);
            counters.record(len);
            return buf;
        } catch (FileNotFoundException e) {
            throw error("Missing SST file", offset, e);
        } catch (EOFException e) {
            throw error(
                    "Truncated SST file: expected "
                            + fileSize
                            + " bytes but "
                            + e.getMessage()
                            + "; trailer expected",
                    Math.max(0, fileSize - SstFormat.TRAILER_BYTES),
                    e);
        } catch (IOException e) {
            if (e.getMessage() != null && e.getMessage().startsWith("SST file ")) {
                throw e;
            }
            throw error(
                    "Read failed (" + e.getClass().getSimpleName() + ": " + e.getMessage() + ")",
                    offset,
                    e);
        }
    }

    private long statusSize() throws IOException {
        try {
            return fs.getFileStatus(path).getLen();
        } catch (FileNotFoundException e) {
            throw error("Missing SST file", 0, e);
        }
    }

    /**
     * The last bytes of the file, read once at open; {@link #cover} extends it towards the start
     * when a part of the metadata lies before it.
     */
    private final class Tail {
        long start;
        byte[] bytes;

        /** Null, or the disk tier the tail is read from when it holds it. */
        final DiskCache local;

        /** Whether any part came from the disk tier rather than the file. */
        boolean usedLocal;

        Tail(long tailBytes, DiskCache local) throws IOException {
            this.local = local;
            int window = (int) Math.min(fileSize, Math.max(SstFormat.TRAILER_BYTES, tailBytes));
            start = fileSize - window;
            bytes = read(start, window);
        }

        /** Makes sure the tail starts at or before {@code offset} (one more read if not). */
        void cover(long offset) throws IOException {
            if (offset < start) {
                byte[] more = read(offset, (int) (start - offset));
                byte[] all = new byte[more.length + bytes.length];
                System.arraycopy(more, 0, all, 0, more.length);
                System.arraycopy(bytes, 0, all, more.length, bytes.length);
                bytes = all;
                start = offset;
            }
        }

        int at(long offset) {
            return (int) (offset - start);
        }

        private byte[] read(long offset, int length) throws IOException {
            byte[] b = local == null ? null : local.read(name, offset, length);
            if (b != null) {
                usedLocal = true;
                return b;
            }
            return readAt(offset, length);
        }
    }

    /**
     * Reads the metadata, from the disk tier's copy of the tail where it has one; a local copy that
     * fails any check is dropped and the metadata read again from the file, whose tail is then
     * offered to the disk tier.
     */
    private Metadata openMetadata(DiskCache disk, long tailBytes) throws IOException {
        try {
            return openMetadataOnce(disk, tailBytes);
        } catch (InternalError fault) {
            // a memory-mapped copy's page could not be read, reported late (see localCopy)
            DiskCache.absorbMappedFault(disk, fault);
            return openMetadataOnce(null, tailBytes);
        }
    }

    private Metadata openMetadataOnce(DiskCache disk, long tailBytes) throws IOException {
        Tail tail = new Tail(Math.min(tailBytes, Integer.MAX_VALUE - 8), disk);
        try {
            Metadata m = readMetadata(tail);
            if (disk != null && !tail.usedLocal) {
                disk.offer(name, tail.start, tail.bytes);
            }
            return m;
        } catch (IOException e) {
            if (!tail.usedLocal
                    || Thread.currentThread().isInterrupted()
                    || InFlight.causedByInterrupt(e)) {
                throw e; // not the local copy's fault (an interrupt): keep it
            }
            disk.invalidate(name, tail.start, e.getMessage());
            return openMetadataOnce(null, tailBytes);
        }
    }

    /** What opening reads from the file's tail. */
    private record Metadata(
            SstFooter footer,
            int version,
            BlockIndex blocks,
            BloomFilter bloom,
            List<PrefixTombstone> tombstones,
            long metadataStart) {}

    /** Reads and checks trailer, footer, index, bloom and tombstones: one or two reads. */
    private Metadata readMetadata(Tail tail) throws IOException {
        long tOff = fileSize - SstFormat.TRAILER_BYTES;
        ByteReader r = new ByteReader(tail.bytes, tail.at(tOff), SstFormat.TRAILER_BYTES);
        int len = r.u32();
        int crc = r.u32();
        int v = r.u8();
        long magic = r.u64();
        if (magic != SstFormat.MAGIC) {
            throw error(
                    "Bad magic " + Long.toHexString(magic) + " (truncated or not an SST file)",
                    tOff + 9,
                    null);
        }
        if (v < SstFormat.VERSION_1 || v > SstFormat.VERSION) {
            throw error(
                    "Unsupported SST version "
                            + v
                            + " (this reader supports "
                            + SstFormat.VERSION_1
                            + " to "
                            + SstFormat.VERSION
                            + ")",
                    tOff + 8,
                    null);
        }
        long fOff = tOff - len;
        if (len < 0 || fOff < 0) {
            throw error("Bad footer length " + len, tOff, null);
        }
        tail.cover(fOff);
        if (SstFormat.crc32c(tail.bytes, tail.at(fOff), len) != crc) {
            throw error("Corrupted footer (CRC32C mismatch)", fOff, null);
        }
        SstFooter footer;
        try {
            footer =
                    SstFooter.decode(
                            Arrays.copyOfRange(tail.bytes, tail.at(fOff), tail.at(fOff) + len), v);
        } catch (IOException e) {
            throw error("Malformed footer", fOff, e);
        }
        long metaStart = fOff;
        for (BlockHandle h : List.of(footer.index(), footer.bloom(), footer.tombstones())) {
            checkBounds(h);
            if (h.end() > fOff) {
                throw error("Metadata block overlaps the footer", h.offset(), null);
            }
            metaStart = Math.min(metaStart, h.offset());
        }
        tail.cover(metaStart);

        BlockHandle ih = footer.index();
        byte[] idx = verified(tail.bytes, tail.at(ih.offset()), ih);
        BlockIndex blockIndex;
        try {
            blockIndex = BlockIndex.decode(idx);
        } catch (IOException e) {
            throw error("Malformed index block", ih.offset(), e);
        }
        BlockHandle bh = footer.bloom();
        BloomFilter bloom;
        try {
            bloom =
                    BloomFilter.decode(
                            verified(tail.bytes, tail.at(bh.offset()), bh),
                            v >= SstFormat.VERSION_5);
        } catch (IOException e) {
            if (e.getMessage() != null && e.getMessage().startsWith("SST file ")) {
                throw e;
            }
            throw error("Malformed bloom block", bh.offset(), e);
        }
        BlockHandle th = footer.tombstones();
        return new Metadata(
                footer,
                v,
                blockIndex,
                bloom,
                decodeTombstones(verified(tail.bytes, tail.at(th.offset()), th), th.offset()),
                metaStart);
    }

    private List<PrefixTombstone> decodeTombstones(byte[] b, long offset) throws IOException {
        ByteReader r = new ByteReader(b, 0, b.length);
        try {
            int n = r.varint32();
            List<PrefixTombstone> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                out.add(new PrefixTombstone(r.bytes(), r.varint()));
            }
            return List.copyOf(out);
        } catch (IOException e) {
            throw error("Malformed tombstone block", offset, e);
        }
    }

    private IOException error(String what, long offset, Throwable cause) {
        return new IOException("SST file " + name + " at offset " + offset + ": " + what, cause);
    }
}
