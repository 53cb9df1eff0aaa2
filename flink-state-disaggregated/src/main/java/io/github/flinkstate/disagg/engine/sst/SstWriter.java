package io.github.flinkstate.disagg.engine.sst;

import io.github.flinkstate.disagg.engine.cache.WriteThrough;
import io.github.flinkstate.disagg.engine.key.Bytes;
import io.github.flinkstate.disagg.engine.key.EntryType;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.key.KeyRange;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.ToIntFunction;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

/**
 * Streams one SST file straight to a Flink {@link FileSystem} (format: docs/format/disagg-sst.md,
 * version {@link SstFormat#VERSION}).
 *
 * <p>Call order: {@code add* (addTombstone)* (finish | abort)}. Entries must come in strictly
 * increasing key order (checked: a violation throws {@link IllegalArgumentException}); prefix
 * tombstones may be added in any order.
 *
 * <p>Thread safety: not thread-safe; one writer per thread. Memory: one data block buffer and its
 * entry offsets, the index entries and one 64-bit hash per key (and per distinct bloom prefix) for
 * the bloom filter.
 *
 * <p>Invariants:
 *
 * <ol>
 *   <li>{@link #bytesWritten()} = bytes written so far plus the pending block with its offset
 *       array, whose offsets are {@code entryOffsets[0..DataBlock.offsetCount(version,
 *       blockEntries))} (every entry in versions 2-4, every restart point in version 5).
 *   <li>Every key lies in the writer's key-group span.
 * </ol>
 */
public final class SstWriter implements AutoCloseable {

    /**
     * Bytes collected before they are handed to the primary file system's stream in one call
     * (blocks are a few KiB, and each was two calls).
     */
    public static final int WRITE_BUFFER_BYTES = 64 << 10;

    private final FileSystem fs;
    private final Path path;
    private final int blockSize;
    private final int bloomBitsPerKey;
    private final KeyGroupSpan span;
    private final int version;
    private final ToIntFunction<byte[]> bloomPrefix;
    private final BlockCompression compression;
    private final FSDataOutputStream out;
    private final byte[] pending = new byte[WRITE_BUFFER_BYTES];
    private int pendingBytes;
    private final WriteThrough localCopy;
    private final ByteWriter block = new ByteWriter(8192);
    private final ByteWriter stored = new ByteWriter(8192);
    private final ByteWriter index = new ByteWriter(1024);
    private final List<PrefixTombstone> tombstones = new ArrayList<>();
    private long[] hashes = new long[1024];
    private int hashCount;
    private byte[] lastPrefix;
    private int[] entryOffsets = new int[64];
    private int blockEntries;
    private long offset;
    private byte[] firstKey;
    private byte[] lastKey;
    private long entries;
    private long deletes;
    private int dataBlocks;
    private long minSeq = Long.MAX_VALUE;
    private long maxSeq = 0;
    private boolean done;

    public SstWriter(
            FileSystem fs, Path path, int blockSize, int bloomBitsPerKey, KeyGroupSpan span)
            throws IOException {
        this(fs, path, blockSize, bloomBitsPerKey, span, null);
    }

    /**
     * A writer whose bloom filter also holds each key's prefix of length {@code
     * bloomPrefix.applyAsInt(key)} when that is shorter than the key and positive ({@link
     * io.github.flinkstate.disagg.engine.LsmOptions#bloomPrefix}); null: whole keys only.
     */
    public SstWriter(
            FileSystem fs,
            Path path,
            int blockSize,
            int bloomBitsPerKey,
            KeyGroupSpan span,
            ToIntFunction<byte[]> bloomPrefix)
            throws IOException {
        this(fs, path, blockSize, bloomBitsPerKey, span, bloomPrefix, BlockCompression.NONE);
    }

    /** As above, with the data blocks compressed by {@code compression}. */
    public SstWriter(
            FileSystem fs,
            Path path,
            int blockSize,
            int bloomBitsPerKey,
            KeyGroupSpan span,
            ToIntFunction<byte[]> bloomPrefix,
            BlockCompression compression)
            throws IOException {
        this(fs, path, blockSize, bloomBitsPerKey, span, bloomPrefix, compression, null);
    }

    /**
     * As above, also writing every byte to {@code localCopy} (null: none), which is committed to
     * the local disk cache when the file is finished and abandoned if it is aborted.
     */
    public SstWriter(
            FileSystem fs,
            Path path,
            int blockSize,
            int bloomBitsPerKey,
            KeyGroupSpan span,
            ToIntFunction<byte[]> bloomPrefix,
            BlockCompression compression,
            WriteThrough localCopy)
            throws IOException {
        this(
                fs,
                path,
                blockSize,
                bloomBitsPerKey,
                span,
                bloomPrefix,
                compression,
                SstFormat.VERSION,
                localCopy);
    }

    /** Writes an older format version; only for compatibility tests. */
    SstWriter(
            FileSystem fs,
            Path path,
            int blockSize,
            int bloomBitsPerKey,
            KeyGroupSpan span,
            ToIntFunction<byte[]> bloomPrefix,
            int version)
            throws IOException {
        this(
                fs,
                path,
                blockSize,
                bloomBitsPerKey,
                span,
                bloomPrefix,
                BlockCompression.NONE,
                version,
                null);
    }

    private SstWriter(
            FileSystem fs,
            Path path,
            int blockSize,
            int bloomBitsPerKey,
            KeyGroupSpan span,
            ToIntFunction<byte[]> bloomPrefix,
            BlockCompression compression,
            int version,
            WriteThrough localCopy)
            throws IOException {
        if (version < SstFormat.VERSION_1 || version > SstFormat.VERSION) {
            throw new IllegalArgumentException("cannot write SST version " + version);
        }
        if (bloomPrefix != null && version < 3) {
            throw new IllegalArgumentException("SST version " + version + " has no bloom prefixes");
        }
        if (compression != BlockCompression.NONE && version < 4) {
            throw new IllegalArgumentException("SST version " + version + " has no compression");
        }
        this.version = version;
        this.bloomPrefix = bloomPrefix;
        this.compression = compression;
        this.fs = fs;
        this.path = path;
        this.blockSize = blockSize;
        this.bloomBitsPerKey = bloomBitsPerKey;
        this.span = span;
        try {
            this.out = fs.create(path, FileSystem.WriteMode.NO_OVERWRITE);
        } catch (IOException | RuntimeException e) {
            if (localCopy != null) {
                localCopy.abort();
            }
            throw e;
        }
        this.localCopy = localCopy;
    }

    public Path path() {
        return path;
    }

    /** Appends an entry. REQUIRES: key greater than the previous key; key in the span. */
    public void add(byte[] key, long seq, byte type, byte[] value) throws IOException {
        if (lastKey != null && Bytes.compare(key, lastKey) <= 0) {
            throw new IllegalArgumentException(
                    "SST keys out of order in "
                            + path
                            + ": "
                            + Bytes.hex(key)
                            + " after "
                            + Bytes.hex(lastKey));
        }
        checkKeyGroup(key);
        if (block.length() > 0
                && block.length() + offsetArrayBytes(blockEntries + 1) + key.length >= blockSize) {
            flushBlock(key);
        }
        boolean restart = DataBlock.isRestart(version, blockEntries);
        if (restart) {
            int n = DataBlock.offsetCount(version, blockEntries);
            if (n == entryOffsets.length) {
                entryOffsets = Arrays.copyOf(entryOffsets, entryOffsets.length * 2);
            }
            entryOffsets[n] = block.length();
        }
        if (version >= SstFormat.VERSION_5) {
            int shared = restart ? 0 : DataBlock.sharedPrefix(key, lastKey);
            DataBlock.encodePrefixedEntry(block, shared, key, seq, type, value);
        } else {
            DataBlock.encodeEntry(block, key, seq, type, value);
        }
        blockEntries++;
        if (firstKey == null) {
            firstKey = key;
        }
        lastKey = key;
        addHash(BloomFilter.hash(key));
        if (bloomPrefix != null) {
            int p = bloomPrefix.applyAsInt(key);
            // keys are sorted: equal prefixes are adjacent, each goes in once
            if (p > 0
                    && p < key.length
                    && (lastPrefix == null
                            || !Arrays.equals(key, 0, p, lastPrefix, 0, lastPrefix.length))) {
                lastPrefix = Arrays.copyOf(key, p);
                addHash(BloomFilter.hash(lastPrefix));
            }
        }
        entries++;
        if (type == EntryType.DELETE) {
            deletes++;
        }
        noteSeq(seq);
    }

    private void addHash(long h) {
        if (hashCount == hashes.length) {
            hashes = Arrays.copyOf(hashes, hashes.length * 2);
        }
        hashes[hashCount++] = h;
    }

    /** Records a prefix tombstone (prefix of at least 2 bytes, in the span). */
    public void addTombstone(byte[] prefix, long seq) {
        checkKeyGroup(prefix);
        tombstones.add(new PrefixTombstone(prefix, seq));
        noteSeq(seq);
    }

    public boolean isEmpty() {
        return entries == 0 && tombstones.isEmpty();
    }

    public long entryCount() {
        return entries;
    }

    public long bytesWritten() {
        return offset + block.length() + (blockEntries > 0 ? offsetArrayBytes(blockEntries) : 0);
    }

    /** Size of the offset array of a block of {@code n} entries (0 for version 1). */
    private int offsetArrayBytes(int n) {
        return DataBlock.offsetArrayBytes(version, n);
    }

    /**
     * Writes the remaining blocks, footer and trailer and closes the file.
     *
     * @param bounds the file's declared key range, or null to derive it from the content; when
     *     given it must contain every key, and tombstones apply only inside it
     * @return the footer written
     */
    public SstFooter finish(KeyRange bounds) throws IOException {
        if (block.length() > 0) {
            flushBlock(null);
        }
        BlockHandle tombHandle = writeBlock(encodeTombstones());
        BloomFilter bloom =
                BloomFilter.build(
                        hashes, hashCount, bloomBitsPerKey, version >= SstFormat.VERSION_5);
        ByteWriter bw = new ByteWriter(bloom.sizeBytes());
        bloom.encode(bw);
        BlockHandle bloomHandle = writeBlock(bw);
        BlockHandle indexHandle = writeBlock(index);
        KeyRange range = bounds != null ? bounds : contentRange();
        if (firstKey != null && !(range.contains(firstKey) && range.contains(lastKey))) {
            throw new IllegalArgumentException(
                    "bounds " + range + " do not contain keys of " + path);
        }
        SstFooter footer =
                new SstFooter(
                        indexHandle,
                        bloomHandle,
                        tombHandle,
                        dataBlocks,
                        entries,
                        deletes,
                        tombstones.size(),
                        minSeq == Long.MAX_VALUE ? 0 : minSeq,
                        maxSeq,
                        keyGroups(range),
                        range,
                        bloomPrefix != null ? SstFormat.FLAG_BLOOM_PREFIXES : 0);
        byte[] f = footer.encode(version);
        ByteWriter trailer = new ByteWriter(SstFormat.TRAILER_BYTES);
        trailer.u32(f.length)
                .u32(SstFormat.crc32c(f, 0, f.length))
                .u8(version)
                .u64(SstFormat.MAGIC);
        write(f, 0, f.length);
        write(trailer.array(), 0, trailer.length());
        offset += f.length + trailer.length();
        flushPending();
        out.flush();
        out.sync();
        out.close();
        done = true;
        if (localCopy != null) {
            localCopy.commit(offset);
        }
        return footer;
    }

    /** Closes and deletes a partially written file (best effort). */
    public void abort() {
        if (done) {
            return;
        }
        done = true;
        if (localCopy != null) {
            localCopy.abort();
        }
        try {
            out.close();
        } catch (IOException | RuntimeException ignored) {
            // the original failure is what matters
        }
        try {
            fs.delete(path, false);
        } catch (IOException | RuntimeException ignored) {
            // an orphan file is harmless: no version references it
        }
    }

    @Override
    public void close() {
        abort();
    }

    /** The total file size after {@link #finish}. */
    public long fileSize() {
        return offset;
    }

    private KeyRange contentRange() {
        byte[] lo = firstKey;
        byte[] limit = lastKey == null ? null : Bytes.successor(lastKey);
        boolean unbounded = false;
        for (PrefixTombstone t : tombstones) {
            if (lo == null || Bytes.compare(t.prefix(), lo) < 0) {
                lo = t.prefix();
            }
            byte[] tl = Bytes.prefixLimit(t.prefix());
            if (tl == null) {
                unbounded = true;
            } else if (limit == null || Bytes.compare(tl, limit) > 0) {
                limit = tl;
            }
        }
        if (lo == null) {
            return new KeyRange(span.lowerKey(), span.lowerKey());
        }
        return new KeyRange(lo, unbounded ? null : limit);
    }

    private KeyGroupSpan keyGroups(KeyRange range) {
        if (firstKey == null && tombstones.isEmpty()) {
            return KeyGroupSpan.EMPTY;
        }
        int lo = Integer.MAX_VALUE;
        int hi = -1;
        if (firstKey != null) {
            lo = KeyGroupSpan.keyGroupOf(firstKey);
            hi = KeyGroupSpan.keyGroupOf(lastKey);
        }
        for (PrefixTombstone t : tombstones) {
            int kg = KeyGroupSpan.keyGroupOf(t.prefix());
            lo = Math.min(lo, kg);
            hi = Math.max(hi, kg);
        }
        return KeyGroupSpan.of(lo, hi);
    }

    private void checkKeyGroup(byte[] key) {
        if (key.length < KeyGroupSpan.PREFIX_BYTES
                || !span.contains(KeyGroupSpan.keyGroupOf(key))) {
            throw new IllegalArgumentException("key " + Bytes.hex(key) + " outside " + span);
        }
    }

    private void noteSeq(long seq) {
        minSeq = Math.min(minSeq, seq);
        maxSeq = Math.max(maxSeq, seq);
    }

    private ByteWriter encodeTombstones() {
        ByteWriter w = new ByteWriter(16 + tombstones.size() * 16);
        w.varint(tombstones.size());
        for (PrefixTombstone t : tombstones) {
            w.bytes(t.prefix());
            w.varint(t.seq());
        }
        return w;
    }

    /**
     * Writes the pending block and its index entry. {@code nextKey} is the first key of the next
     * block (null for the last block): from version 5 the index holds the shortest separator
     * between the block's last key and it instead of the last key itself.
     */
    private void flushBlock(byte[] nextKey) throws IOException {
        if (version >= 2) {
            DataBlock.encodeOffsets(
                    block, entryOffsets, DataBlock.offsetCount(version, blockEntries));
        }
        blockEntries = 0;
        BlockHandle h;
        if (version >= 4) {
            compression.encode(block.array(), block.length(), stored);
            h = writeBlock(stored);
        } else {
            h = writeBlock(block);
        }
        index.bytes(
                version >= SstFormat.VERSION_5 && nextKey != null
                        ? separator(lastKey, nextKey)
                        : lastKey);
        index.varint(h.offset());
        index.varint(h.length());
        dataBlocks++;
        block.reset();
    }

    /**
     * The shortest key {@code s} with {@code last <= s < next} (REQUIRES {@code last < next}): the
     * common prefix plus one byte one above {@code last}'s where that stays below {@code next}'s,
     * else {@code last} cut after its first byte (past the common prefix) that can be raised.
     */
    static byte[] separator(byte[] last, byte[] next) {
        int i = DataBlock.sharedPrefix(last, next);
        if (i >= last.length) {
            return last; // last is a prefix of next: nothing shorter lies between them
        }
        int a = last[i] & 0xFF;
        if (a + 1 < (next[i] & 0xFF)) {
            byte[] s = Arrays.copyOf(last, i + 1);
            s[i] = (byte) (a + 1);
            return s;
        }
        // next[i] = last[i] + 1: keep last[i], then raise the first byte after it below 0xFF
        for (int j = i + 1; j < last.length - 1; j++) {
            if ((last[j] & 0xFF) < 0xFF) {
                byte[] s = Arrays.copyOf(last, j + 1);
                s[j] = (byte) ((last[j] & 0xFF) + 1);
                return s;
            }
        }
        return last;
    }

    private BlockHandle writeBlock(ByteWriter payload) throws IOException {
        BlockHandle h = new BlockHandle(offset, payload.length());
        int crc = SstFormat.crc32c(payload.array(), 0, payload.length());
        write(payload.array(), 0, payload.length());
        byte[] crcBytes = {
            (byte) (crc >>> 24), (byte) (crc >>> 16), (byte) (crc >>> 8), (byte) crc
        };
        write(crcBytes, 0, crcBytes.length);
        offset = h.end();
        return h;
    }

    /**
     * Writes to the primary file (through {@link #pending}: whole buffers, or one call for a chunk
     * larger than the buffer) and, if there is one, to the local copy.
     */
    private void write(byte[] b, int off, int len) throws IOException {
        if (len > pending.length - pendingBytes) {
            flushPending();
        }
        if (len >= pending.length) {
            out.write(b, off, len);
        } else {
            System.arraycopy(b, off, pending, pendingBytes, len);
            pendingBytes += len;
        }
        if (localCopy != null) {
            localCopy.write(b, off, len);
        }
    }

    private void flushPending() throws IOException {
        if (pendingBytes > 0) {
            out.write(pending, 0, pendingBytes);
            pendingBytes = 0;
        }
    }
}
