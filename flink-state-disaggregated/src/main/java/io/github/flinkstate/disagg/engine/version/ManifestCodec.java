package io.github.flinkstate.disagg.engine.version;

import io.github.flinkstate.disagg.engine.cache.CacheHint;
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
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Encodes and decodes a manifest: the store's key-group span, its last sequence number, the files
 * of each level with their clips and, in an optional section, the {@link CacheHint} of what the
 * caches held. Spec: docs/format/disagg-manifest.md, version {@link #VERSION} (version 1, without
 * sections, is still read, and written when there is no section); the payload is covered by a
 * CRC32C. A section whose content does not decode (written by a faulty writer: its bytes passed the
 * CRC) is left out with one log line, as is a section of a type this code does not know; the files
 * are what a restore needs. A section count or length that does not fit the payload fails the
 * manifest like any other field.
 *
 * <p>Thread safety: stateless.
 */
public final class ManifestCodec {

    /** ASCII "DISAGMAN". Frozen. */
    public static final long MAGIC = 0x44495341474D414EL;

    /** Manifest format version written by this code for a manifest with sections. */
    public static final byte VERSION = 2;

    /** The version before sections, still read, and written for a manifest without any. */
    static final byte VERSION_1 = 1;

    /** Section type of the cache hint. */
    static final int SECTION_CACHE_HINT = 1;

    /** Section type of the cache hint's memory part: which named blocks the memory tier held. */
    static final int SECTION_CACHE_HINT_MEMORY = 2;

    private static final Logger LOG = LoggerFactory.getLogger(ManifestCodec.class);

    /**
     * A decoded manifest.
     *
     * @param hint what the caches held, with the files' paths as recorded; empty if none
     */
    public record Manifest(
            KeyGroupSpan span, long lastSeq, List<List<FileMeta>> levels, CacheHint hint) {}

    private ManifestCodec() {}

    /** A manifest without a cache hint. */
    public static byte[] encode(KeyGroupSpan span, long lastSeq, Version v) {
        return encode(span, lastSeq, v, CacheHint.EMPTY);
    }

    /**
     * A manifest of {@code v}; {@code hint}'s entries for files that {@code v} does not list are
     * left out.
     */
    public static byte[] encode(KeyGroupSpan span, long lastSeq, Version v, CacheHint hint) {
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
        // without a section the manifest is written as version 1, which builds before version 2
        // read too (a job that records no hint can go back to one)
        Map<String, Integer> numbers = fileNumbers(v);
        byte[] hintSection = encodeHint(numbers, hint);
        byte[] memorySection = hintSection == null ? null : encodeMemoryPart(numbers, hint);
        if (hintSection != null) {
            p.varint(memorySection == null ? 1 : 2);
            p.u8(SECTION_CACHE_HINT);
            p.bytes(hintSection);
            if (memorySection != null) {
                p.u8(SECTION_CACHE_HINT_MEMORY);
                p.bytes(memorySection);
            }
        }
        ByteWriter out = new ByteWriter(p.length() + 17);
        out.u64(MAGIC).u8(hintSection == null ? VERSION_1 : VERSION).u32(p.length());
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
            if (version != VERSION && version != VERSION_1) {
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
            CacheHint hint = CacheHint.EMPTY;
            byte[] memorySection = null;
            List<String> paths = paths(levels); // by file number, for the sections
            if (version >= 2) {
                int sections = p.varint32();
                for (int s = 0; s < sections; s++) {
                    int type = p.u8();
                    byte[] section = p.bytes();
                    if (type == SECTION_CACHE_HINT) {
                        hint = decodeHint(section, paths);
                    } else if (type == SECTION_CACHE_HINT_MEMORY && memorySection == null) {
                        memorySection = section;
                    } else if (type == SECTION_CACHE_HINT_MEMORY) {
                        LOG.warn("Manifest's second cache hint memory part left out");
                    } else {
                        LOG.info("Manifest section of unknown type {} left out", type);
                    }
                }
            }
            if (memorySection != null && hint.isEmpty()) {
                LOG.info("Manifest's cache hint memory part left out: no cache hint to mark");
            } else if (memorySection != null) {
                hint = withMemoryPart(hint, memorySection, paths);
            }
            return new Manifest(span, lastSeq, levels, hint);
        } catch (IOException e) {
            throw new IOException(
                    "Corrupted manifest (" + b.length + " bytes): " + e.getMessage(), e);
        }
    }

    /**
     * The number of each file of {@code v}: its place in the listing, a path listed twice (a file
     * that two restored manifests both brought, clipped two ways) taking two numbers and known by
     * the first.
     */
    private static Map<String, Integer> fileNumbers(Version v) {
        Map<String, Integer> index = new HashMap<>();
        int number = 0;
        for (List<FileMeta> level : v.levels()) {
            for (FileMeta f : level) {
                index.putIfAbsent(f.path(), number++);
            }
        }
        return index;
    }

    /** The paths of {@code levels} by file number (see {@link #fileNumbers}). */
    private static List<String> paths(List<List<FileMeta>> levels) {
        List<String> paths = new ArrayList<>();
        for (List<FileMeta> level : levels) {
            for (FileMeta f : level) {
                paths.add(f.path());
            }
        }
        return paths;
    }

    /**
     * The cache-hint section of {@code hint} for the files {@code index} numbers; null if it names
     * none.
     */
    private static byte[] encodeHint(Map<String, Integer> index, CacheHint hint) {
        if (hint.isEmpty()) {
            return null;
        }
        ByteWriter entries = new ByteWriter(64 + (int) Math.min(1 << 20, 2 * hint.blockCount()));
        int count = 0;
        for (CacheHint.Entry e : hint.entries()) {
            Integer i = index.get(e.file());
            if (i == null) {
                continue;
            }
            count++;
            entries.varint(i).u8(e.whole() ? 1 : 0);
            if (!e.whole()) {
                writeOffsets(entries, e.offsets(), e.offsets().length);
            }
        }
        return section(count, entries);
    }

    /**
     * The cache hint in {@code section}, its file indexes resolved against {@code paths}; empty
     * (with one log line) if the section does not decode.
     */
    private static CacheHint decodeHint(byte[] section, List<String> paths) {
        try {
            ByteReader r = new ByteReader(section, 0, section.length);
            int count = r.varint32();
            List<CacheHint.Entry> entries = new ArrayList<>();
            Set<Integer> seen = new HashSet<>();
            for (int e = 0; e < count; e++) {
                int file = r.varint32();
                if (file < 0 || file >= paths.size() || !seen.add(file)) {
                    throw new IOException("file index " + file + " of " + paths.size());
                }
                int kind = r.u8();
                if (kind == 1) {
                    entries.add(new CacheHint.Entry(paths.get(file), true, new long[0]));
                    continue;
                }
                if (kind != 0) {
                    throw new IOException("entry kind " + kind);
                }
                entries.add(
                        new CacheHint.Entry(
                                paths.get(file), false, offsets(r, r.varint32(), section, e)));
            }
            if (r.hasRemaining()) {
                throw new IOException("bytes after the last entry");
            }
            return new CacheHint(entries);
        } catch (IOException | RuntimeException e) {
            LOG.warn(
                    "Manifest's cache hint ({} bytes) left out, the warm-up goes by level: {}",
                    section.length,
                    e.getMessage());
            return CacheHint.EMPTY;
        }
    }

    /** {@code n} delta-coded ascending offsets of entry {@code e} from {@code r}. */
    private static long[] offsets(ByteReader r, int n, byte[] section, int e) throws IOException {
        if (n < 0 || n > section.length) {
            throw new IOException("block count " + n + " in " + section.length + " bytes");
        }
        long[] offsets = new long[n];
        long previous = 0;
        for (int b = 0; b < n; b++) {
            long delta = r.varint();
            if (delta < 0 || (b > 0 && delta == 0)) {
                throw new IOException("offsets not ascending in entry " + e);
            }
            previous += delta;
            offsets[b] = previous;
        }
        return offsets;
    }

    /**
     * The memory-part section of {@code hint}: for each block entry the cache-hint section lists (a
     * file {@code index} numbers) that names blocks of the memory tier, the offsets of those only
     * the memory tier held, then of those both tiers held; null if no entry names one.
     */
    private static byte[] encodeMemoryPart(Map<String, Integer> index, CacheHint hint) {
        ByteWriter entries =
                new ByteWriter(64 + (int) Math.min(1 << 20, 2 * hint.memoryBlockCount()));
        int count = 0;
        for (CacheHint.Entry e : hint.entries()) {
            Integer i = index.get(e.file());
            if (i == null || e.whole() || e.memoryOffsets().length == 0) {
                continue;
            }
            // only offsets the entry names, each in one list (the decoder rejects anything else)
            long[] only = new long[e.memoryOffsets().length];
            long[] both = new long[e.memoryOffsets().length];
            int n = 0;
            int m = 0;
            for (long offset : e.memoryOffsets()) {
                if (Arrays.binarySearch(e.offsets(), offset) < 0) {
                    continue;
                }
                if (Arrays.binarySearch(e.memoryOnlyOffsets(), offset) >= 0) {
                    only[n++] = offset;
                } else {
                    both[m++] = offset;
                }
            }
            if (n + m == 0) {
                continue;
            }
            count++;
            entries.varint(i);
            writeOffsets(entries, only, n);
            writeOffsets(entries, both, m);
        }
        return section(count, entries);
    }

    /** A section of {@code count} entries written to {@code entries}; null if there are none. */
    private static byte[] section(int count, ByteWriter entries) {
        if (count == 0) {
            return null;
        }
        ByteWriter out = new ByteWriter(entries.length() + 5);
        out.varint(count);
        out.raw(entries.array(), 0, entries.length());
        return out.toByteArray();
    }

    /** The first {@code n} of {@code offsets} (ascending) as a count and distances. */
    private static void writeOffsets(ByteWriter w, long[] offsets, int n) {
        w.varint(n);
        long previous = 0;
        for (int i = 0; i < n; i++) {
            w.varint(offsets[i] - previous);
            previous = offsets[i];
        }
    }

    /**
     * {@code hint} with the memory part in {@code section}; {@code hint} as it is (with one log
     * line) if the section does not decode or names a block or file that {@code hint} does not.
     */
    private static CacheHint withMemoryPart(CacheHint hint, byte[] section, List<String> paths) {
        try {
            ByteReader r = new ByteReader(section, 0, section.length);
            int count = r.varint32();
            Map<String, CacheHint.Entry> byPath = new HashMap<>();
            hint.entries().forEach(e -> byPath.put(e.file(), e));
            Map<String, CacheHint.Entry> marked = new HashMap<>();
            for (int e = 0; e < count; e++) {
                int file = r.varint32();
                if (file < 0 || file >= paths.size() || marked.containsKey(paths.get(file))) {
                    throw new IOException("file index " + file + " of " + paths.size());
                }
                String path = paths.get(file);
                CacheHint.Entry named = byPath.get(path);
                if (named == null || named.whole()) {
                    throw new IOException("file " + file + " has no block entry in the hint");
                }
                long[] memoryOnly = offsets(r, r.varint32(), section, e);
                long[] both = offsets(r, r.varint32(), section, e);
                long[] all = new long[memoryOnly.length + both.length];
                System.arraycopy(memoryOnly, 0, all, 0, memoryOnly.length);
                System.arraycopy(both, 0, all, memoryOnly.length, both.length);
                Arrays.sort(all);
                for (int i = 0; i < all.length; i++) {
                    if (Arrays.binarySearch(named.offsets(), all[i]) < 0
                            || (i > 0 && all[i] == all[i - 1])) {
                        throw new IOException(
                                "block at "
                                        + all[i]
                                        + " of file "
                                        + file
                                        + " not in the hint once");
                    }
                }
                marked.put(
                        path, new CacheHint.Entry(path, false, named.offsets(), all, memoryOnly));
            }
            if (r.hasRemaining()) {
                throw new IOException("bytes after the last entry");
            }
            List<CacheHint.Entry> entries = new ArrayList<>(hint.entries().size());
            for (CacheHint.Entry e : hint.entries()) {
                entries.add(marked.getOrDefault(e.file(), e));
            }
            return new CacheHint(entries);
        } catch (IOException | RuntimeException e) {
            LOG.warn(
                    "Manifest's cache hint memory part ({} bytes) left out, the warm-up puts every"
                            + " hinted block on disk: {}",
                    section.length,
                    e.getMessage());
            return hint;
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
