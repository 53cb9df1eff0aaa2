package io.github.flinkstate.disagg.engine.version;

import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.key.KeyRange;
import io.github.flinkstate.disagg.engine.sst.ByteReader;
import io.github.flinkstate.disagg.engine.sst.ByteWriter;
import io.github.flinkstate.disagg.engine.sst.PrefixTombstone;
import io.github.flinkstate.disagg.engine.sst.PrefixTombstones;
import io.github.flinkstate.disagg.engine.sst.SstFormat;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Encodes and decodes a manifest: the store's key-group span, its last sequence number and the
 * files of each level with their clips. Spec: docs/format/disagg-manifest.md, version {@link
 * #VERSION}; the payload is covered by a CRC32C.
 *
 * <p>Thread safety: stateless.
 */
public final class ManifestCodec {

    /** ASCII "DISAGMAN". Frozen. */
    public static final long MAGIC = 0x44495341474D414EL;

    /** Manifest format version written by this code. */
    public static final byte VERSION = 1;

    /** A decoded manifest. */
    public record Manifest(KeyGroupSpan span, long lastSeq, List<List<FileMeta>> levels) {}

    private ManifestCodec() {}

    public static byte[] encode(KeyGroupSpan span, long lastSeq, Version v) {
        ByteWriter p = new ByteWriter(256);
        p.u32(span.start()).u32(span.end()).u64(lastSeq);
        p.varint(v.numLevels());
        for (List<FileMeta> level : v.levels()) {
            p.varint(level.size());
            for (FileMeta f : level) {
                p.bytes(f.path().getBytes(StandardCharsets.UTF_8));
                p.u64(f.fileSize());
                p.bytes(f.range().lower());
                p.u8(f.range().limit() == null ? 0 : 1);
                if (f.range().limit() != null) {
                    p.bytes(f.range().limit());
                }
                span(p, f.keyGroups());
                span(p, f.clip());
                p.u64(f.entries()).u64(f.minSeq()).u64(f.maxSeq());
                p.varint(f.tombstones().size());
                for (PrefixTombstone t : f.tombstones().list()) {
                    p.bytes(t.prefix());
                    p.varint(t.seq());
                }
            }
        }
        ByteWriter out = new ByteWriter(p.length() + 17);
        out.u64(MAGIC).u8(VERSION).u32(p.length());
        out.raw(p.array(), 0, p.length());
        out.u32(SstFormat.crc32c(p.array(), 0, p.length()));
        return out.toByteArray();
    }

    /** Decodes a manifest; files come back as foreign (not created by the decoding store). */
    public static Manifest decode(byte[] b) throws IOException {
        ByteReader h = new ByteReader(b, 0, b.length);
        try {
            long magic = h.u64();
            if (magic != MAGIC) {
                throw new IOException("bad magic " + Long.toHexString(magic) + " at offset 0");
            }
            int version = h.u8();
            if (version != VERSION) {
                throw new IOException("unsupported version " + version + " at offset 8");
            }
            int len = h.u32();
            if (len < 0 || 13 + len + 4 != b.length) {
                throw new IOException(
                        "length " + len + " does not match " + b.length + " bytes (truncated?)");
            }
            ByteReader crcReader = new ByteReader(b, 13 + len, 4);
            int crc = crcReader.u32();
            if (crc != SstFormat.crc32c(b, 13, len)) {
                throw new IOException("CRC32C mismatch over payload at offset 13");
            }
            ByteReader p = new ByteReader(b, 13, len);
            KeyGroupSpan span = span(p);
            long lastSeq = p.u64();
            int numLevels = p.varint32();
            List<List<FileMeta>> levels = new ArrayList<>();
            for (int l = 0; l < numLevels; l++) {
                int n = p.varint32();
                List<FileMeta> files = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    String path = new String(p.bytes(), StandardCharsets.UTF_8);
                    long size = p.u64();
                    byte[] lower = p.bytes();
                    byte[] limit = p.u8() == 0 ? null : p.bytes();
                    KeyGroupSpan kgs = span(p);
                    KeyGroupSpan clip = span(p);
                    long entries = p.u64();
                    long minSeq = p.u64();
                    long maxSeq = p.u64();
                    int tn = p.varint32();
                    List<PrefixTombstone> tombs = new ArrayList<>(tn);
                    for (int t = 0; t < tn; t++) {
                        tombs.add(new PrefixTombstone(p.bytes(), p.varint()));
                    }
                    files.add(
                            new FileMeta(
                                    path,
                                    size,
                                    new KeyRange(lower, limit),
                                    kgs,
                                    clip,
                                    entries,
                                    minSeq,
                                    maxSeq,
                                    PrefixTombstones.of(tombs),
                                    false,
                                    new FileMeta.RefCount()));
                }
                levels.add(files);
            }
            return new Manifest(span, lastSeq, levels);
        } catch (IOException e) {
            throw new IOException(
                    "Corrupted manifest (" + b.length + " bytes): " + e.getMessage(), e);
        }
    }

    private static void span(ByteWriter w, KeyGroupSpan s) {
        w.u32(s.start()).u32(s.end());
    }

    private static KeyGroupSpan span(ByteReader r) throws IOException {
        int lo = r.u32();
        int hi = r.u32();
        if (lo > hi) {
            return KeyGroupSpan.EMPTY;
        }
        try {
            return KeyGroupSpan.of(lo, hi);
        } catch (IllegalArgumentException e) {
            throw new IOException(e.getMessage(), e);
        }
    }
}
