package io.github.flinkstate.disagg.engine.sst;

import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.key.KeyRange;
import java.io.IOException;

/**
 * The footer of an SST file: block handles, key range, key-group range, sequence range and entry
 * counts. Layout and field order are specified in docs/format/disagg-sst.md (version {@link
 * SstFormat#VERSION}); the footer is covered by the CRC32C in the trailer.
 *
 * <p>Thread safety: immutable.
 *
 * <p>Invariants:
 *
 * <ol>
 *   <li>{@code range} contains every key and tombstone prefix of the file.
 *   <li>{@code keyGroups} contains the key group of every key and tombstone.
 *   <li>{@code minSeq <= maxSeq} unless the file is empty.
 * </ol>
 */
public record SstFooter(
        BlockHandle index,
        BlockHandle bloom,
        BlockHandle tombstones,
        int dataBlocks,
        long entries,
        long deletes,
        int tombstoneCount,
        long minSeq,
        long maxSeq,
        KeyGroupSpan keyGroups,
        KeyRange range,
        int flags) {

    /** Whether the bloom filter also holds key prefixes ({@link SstFormat#FLAG_BLOOM_PREFIXES}). */
    public boolean bloomHasPrefixes() {
        return (flags & SstFormat.FLAG_BLOOM_PREFIXES) != 0;
    }

    /** The footer as {@code version} lays it out (flags only from version 3). */
    public byte[] encode(int version) {
        ByteWriter w = new ByteWriter(128);
        handle(w, index);
        handle(w, bloom);
        handle(w, tombstones);
        w.u32(dataBlocks).u64(entries).u64(deletes).u32(tombstoneCount);
        w.u64(minSeq).u64(maxSeq);
        w.u32(keyGroups.start()).u32(keyGroups.end());
        w.bytes(range.lower());
        w.u8(range.limit() == null ? 0 : 1);
        if (range.limit() != null) {
            w.bytes(range.limit());
        }
        if (version >= 3) {
            w.u8(flags);
        }
        return w.toByteArray();
    }

    public static SstFooter decode(byte[] b, int version) throws IOException {
        ByteReader r = new ByteReader(b, 0, b.length);
        BlockHandle index = handle(r);
        BlockHandle bloom = handle(r);
        BlockHandle tomb = handle(r);
        int blocks = r.u32();
        long entries = r.u64();
        long deletes = r.u64();
        int tombs = r.u32();
        long minSeq = r.u64();
        long maxSeq = r.u64();
        int kgLo = r.u32();
        int kgHi = r.u32();
        byte[] lower = r.bytes();
        byte[] limit = r.u8() == 0 ? null : r.bytes();
        int flags = version >= 3 ? r.u8() : 0;
        KeyGroupSpan kgs;
        try {
            kgs = kgLo > kgHi ? KeyGroupSpan.EMPTY : KeyGroupSpan.of(kgLo, kgHi);
        } catch (IllegalArgumentException e) {
            throw new IOException(e.getMessage(), e);
        }
        return new SstFooter(
                index,
                bloom,
                tomb,
                blocks,
                entries,
                deletes,
                tombs,
                minSeq,
                maxSeq,
                kgs,
                new KeyRange(lower, limit),
                flags);
    }

    private static void handle(ByteWriter w, BlockHandle h) {
        w.u64(h.offset()).u32(h.length());
    }

    private static BlockHandle handle(ByteReader r) throws IOException {
        long off = r.u64();
        int len = r.u32();
        if (off < 0 || len < 0) {
            throw new IOException("bad block handle " + off + "/" + len);
        }
        return new BlockHandle(off, len);
    }
}
