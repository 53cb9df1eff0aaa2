package io.github.flinkstate.disagg.engine.sst;

import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.disagg.engine.cache.CachedFile;
import io.github.flinkstate.disagg.engine.key.Bytes;
import io.github.flinkstate.disagg.engine.key.Versioned;
import java.io.EOFException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

/**
 * Reads one SST file in place with positional reads (seek + read) through a Flink {@link
 * FileSystem}; no download of the whole file is ever needed.
 *
 * <p>Opening reads the trailer, footer, index, bloom and tombstone blocks and keeps them in memory;
 * data blocks are read on demand through the shared {@link BlockCache}, in which the reader holds
 * its file's block table open until {@link #close()}.
 *
 * <p>Thread safety: thread-safe. Reads on the underlying stream are serialised on this object. The
 * stream is opened lazily and may be closed at any time (e.g. on eviction from the reader cache);
 * the next read reopens it. A closed reader keeps working, without caching blocks, so eviction
 * never breaks an iterator that still holds the reader.
 *
 * <p>Errors: every I/O or format problem is an {@link IOException} whose message names the file
 * path and the offset involved (missing file, truncated file, checksum mismatch).
 *
 * <p>Invariants:
 *
 * <ol>
 *   <li>{@code lastKeys[i]} is the last key of data block {@code i}; strictly increasing.
 *   <li>All metadata blocks passed their CRC32C check.
 * </ol>
 */
public final class SstReader {

    private final FileSystem fs;
    private final Path path;
    private final String name;
    private final long fileSize;
    private final SstFooter footer;
    private int version;
    private final byte[][] lastKeys;
    private final BlockHandle[] blocks;
    private final BloomFilter bloom;
    private final List<PrefixTombstone> tombstones;
    private final CachedFile cached;
    private final ReadCounters counters;
    private FSDataInputStream in;
    private boolean closed;

    private SstReader(
            FileSystem fs, Path path, BlockCache cache, long expectedSize, ReadCounters counters)
            throws IOException {
        this.fs = fs;
        this.counters = counters;
        this.path = path;
        this.name = path.toString();
        this.fileSize = checkSize(expectedSize);
        this.footer = readFooter();
        byte[] idx = readVerified(footer.index());
        ByteReader r = new ByteReader(idx, 0, idx.length);
        List<byte[]> keys = new ArrayList<>();
        List<BlockHandle> handles = new ArrayList<>();
        try {
            while (r.hasRemaining()) {
                keys.add(r.bytes());
                handles.add(new BlockHandle(r.varint(), r.varint32()));
            }
        } catch (IOException e) {
            throw error("Malformed index block", footer.index().offset(), e);
        }
        this.lastKeys = keys.toArray(new byte[0][]);
        this.blocks = handles.toArray(new BlockHandle[0]);
        try {
            this.bloom = BloomFilter.decode(readVerified(footer.bloom()));
        } catch (IOException e) {
            throw error("Malformed bloom block", footer.bloom().offset(), e);
        }
        this.tombstones = decodeTombstones(readVerified(footer.tombstones()));
        this.cached = cache.open(name, blocks.length);
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
        return new SstReader(fs, path, cache, expectedSize, counters);
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

    public int blockCount() {
        return blocks.length;
    }

    BlockHandle block(int i) {
        return blocks[i];
    }

    /** Index of the first block whose last key is >= key, or blockCount() if none. */
    int findBlock(byte[] key) {
        int lo = 0;
        int hi = lastKeys.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (Bytes.compare(lastKeys[mid], key) < 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** A cursor over data block {@code i} (through the block cache). */
    DataBlock.Cursor cursor(int i) throws IOException {
        return new DataBlock.Cursor(payload(i), version, name, blocks[i].offset());
    }

    /** The verified payload of data block {@code i}, from the block cache or the file. */
    private byte[] payload(int i) throws IOException {
        byte[] p = cached.lookup(i);
        return p != null ? p : cached.insert(i, readVerified(blocks[i]));
    }

    /** Point lookup: the entry for exactly {@code key} in this file, or null. */
    public Versioned get(byte[] key) throws IOException {
        if (!bloom.mightContain(key)) {
            return null;
        }
        int b = findBlock(key);
        if (b >= blocks.length) {
            return null;
        }
        return DataBlock.get(payload(b), version, key, name, blocks[b].offset());
    }

    /** A new iterator over the whole file (callers bound it). */
    public SstIterator iterator() {
        return new SstIterator(this);
    }

    /**
     * Closes the stream and gives up the file's block table in the block cache. Idempotent; later
     * reads still work (reopening the stream, not caching blocks).
     */
    public synchronized void close() {
        if (!closed) {
            closed = true;
            cached.release();
        }
        closeStream();
    }

    /** Closes the underlying stream; a later read reopens it. */
    private synchronized void closeStream() {
        if (in != null) {
            try {
                in.close();
            } catch (IOException ignored) {
                // nothing to do: reads reopen
            }
            in = null;
        }
    }

    /** Reads a block and verifies its CRC32C; the message of any failure names file and offset. */
    byte[] readVerified(BlockHandle h) throws IOException {
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
        byte[] buf = readAt(h.offset(), h.length() + SstFormat.BLOCK_CRC_BYTES);
        int stored =
                ((buf[h.length()] & 0xFF) << 24)
                        | ((buf[h.length() + 1] & 0xFF) << 16)
                        | ((buf[h.length() + 2] & 0xFF) << 8)
                        | (buf[h.length() + 3] & 0xFF);
        int actual = SstFormat.crc32c(buf, 0, h.length());
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
        byte[] payload = new byte[h.length()];
        System.arraycopy(buf, 0, payload, 0, h.length());
        return payload;
    }

    private synchronized byte[] readAt(long offset, int len) throws IOException {
        byte[] buf = new byte[len];
        try {
            if (in == null) {
                in = fs.open(path);
            }
            in.seek(offset);
            int done = 0;
            while (done < len) {
                int n = in.read(buf, done, len - done);
                if (n < 0) {
                    throw new EOFException("end of file after " + (offset + done) + " bytes");
                }
                done += n;
            }
            counters.record(len);
            return buf;
        } catch (FileNotFoundException e) {
            closeStream();
            throw error("Missing SST file", offset, e);
        } catch (IOException e) {
            closeStream();
            if (e.getMessage() != null && e.getMessage().startsWith("SST file ")) {
                throw e;
            }
            throw error(
                    "Read failed (" + e.getClass().getSimpleName() + ": " + e.getMessage() + ")",
                    offset,
                    e);
        }
    }

    private long checkSize(long expected) throws IOException {
        long actual;
        try {
            actual = fs.getFileStatus(path).getLen();
        } catch (FileNotFoundException e) {
            throw error("Missing SST file", 0, e);
        }
        if (expected >= 0 && actual != expected) {
            throw error(
                    "Truncated or resized SST file: expected "
                            + expected
                            + " bytes, found "
                            + actual
                            + "; trailer expected",
                    Math.max(0, expected - SstFormat.TRAILER_BYTES),
                    null);
        }
        if (actual < SstFormat.TRAILER_BYTES) {
            throw error("Truncated SST file: only " + actual + " bytes, no trailer", 0, null);
        }
        return actual;
    }

    private SstFooter readFooter() throws IOException {
        long tOff = fileSize - SstFormat.TRAILER_BYTES;
        byte[] t = readAt(tOff, SstFormat.TRAILER_BYTES);
        ByteReader r = new ByteReader(t, 0, t.length);
        int len = r.u32();
        int crc = r.u32();
        int version = r.u8();
        long magic = r.u64();
        if (magic != SstFormat.MAGIC) {
            throw error(
                    "Bad magic " + Long.toHexString(magic) + " (truncated or not an SST file)",
                    tOff + 9,
                    null);
        }
        if (version != SstFormat.VERSION && version != SstFormat.VERSION_1) {
            throw error(
                    "Unsupported SST version "
                            + version
                            + " (this reader supports "
                            + SstFormat.VERSION_1
                            + " and "
                            + SstFormat.VERSION
                            + ")",
                    tOff + 8,
                    null);
        }
        this.version = version;
        long fOff = tOff - len;
        if (len < 0 || fOff < 0) {
            throw error("Bad footer length " + len, tOff, null);
        }
        byte[] f = readAt(fOff, len);
        if (SstFormat.crc32c(f, 0, len) != crc) {
            throw error("Corrupted footer (CRC32C mismatch)", fOff, null);
        }
        try {
            return SstFooter.decode(f);
        } catch (IOException e) {
            throw error("Malformed footer", fOff, e);
        }
    }

    private List<PrefixTombstone> decodeTombstones(byte[] b) throws IOException {
        ByteReader r = new ByteReader(b, 0, b.length);
        try {
            int n = r.varint32();
            List<PrefixTombstone> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                out.add(new PrefixTombstone(r.bytes(), r.varint()));
            }
            return List.copyOf(out);
        } catch (IOException e) {
            throw error("Malformed tombstone block", footer.tombstones().offset(), e);
        }
    }

    private IOException error(String what, long offset, Throwable cause) {
        return new IOException("SST file " + name + " at offset " + offset + ": " + what, cause);
    }
}
