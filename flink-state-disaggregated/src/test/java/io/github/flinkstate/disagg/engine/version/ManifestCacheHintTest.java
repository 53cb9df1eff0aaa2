package io.github.flinkstate.disagg.engine.version;

import static io.github.flinkstate.disagg.engine.version.ManifestCodecTest.file;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.cache.CacheHint;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.sst.ByteWriter;
import io.github.flinkstate.disagg.engine.sst.SstFormat;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * The manifest's cache-hint section (format version 2): it round-trips, names files of the manifest
 * only, a version-1 manifest still decodes, a section that does not decode or is of an unknown type
 * is left out without failing the manifest, and a restore keeps the hint's entries of the files it
 * reads unclipped.
 */
class ManifestCacheHintTest {

    private static Version version(FileMeta... l1) {
        List<List<FileMeta>> levels = new ArrayList<>();
        levels.add(new ArrayList<>(List.of(file("l0", 0, 7))));
        levels.add(new ArrayList<>(List.of(l1)));
        return new VersionSet(KeyGroupSpan.of(0, 7), levels, f -> {}).current();
    }

    private static CacheHint.Entry blocks(String name, long... offsets) {
        return new CacheHint.Entry("file:/tmp/" + name, false, offsets);
    }

    private static CacheHint.Entry whole(String name) {
        return new CacheHint.Entry("file:/tmp/" + name, true, new long[0]);
    }

    /** Entries as comparable strings: path, then "whole" or the offsets. */
    private static List<String> describe(CacheHint hint) {
        List<String> out = new ArrayList<>();
        for (CacheHint.Entry e : hint.entries()) {
            out.add(e.file() + " " + (e.whole() ? "whole" : Arrays.toString(e.offsets())));
        }
        return out;
    }

    @Test
    void hint_roundTrips_inItsOrder_andNamesOnlyTheManifestsFiles() throws Exception {
        Version v = version(file("a", 0, 3), file("b", 4, 7));
        CacheHint hint =
                new CacheHint(
                        List.of(
                                blocks("b", 0, 4096, 9000, 1_000_000_000_000L),
                                whole("l0"),
                                blocks("gone", 7),
                                blocks("a", 12)));
        ManifestCodec.Manifest m = ManifestCodec.decode(ManifestCodec.encode(span(), 3, v, hint));
        assertThat(describe(m.hint()))
                .containsExactly(
                        "file:/tmp/b [0, 4096, 9000, 1000000000000]",
                        "file:/tmp/l0 whole",
                        "file:/tmp/a [12]");
        assertThat(m.levels().get(1)).extracting(FileMeta::path).contains("file:/tmp/a");
    }

    /**
     * Without a section a manifest is written, and read, as version 1: what builds before version 2
     * wrote and read, so a job recording no hint can go back to one.
     */
    @Test
    void aManifestWithoutAHint_isVersion1_andDecodes() throws Exception {
        byte[] v1 = ManifestCodec.encode(span(), 42, version(file("a", 0, 7)));
        assertThat(v1[8]).isEqualTo(ManifestCodec.VERSION_1);
        ManifestCodec.Manifest m = ManifestCodec.decode(v1);
        assertThat(m.lastSeq()).isEqualTo(42);
        assertThat(m.levels().get(1)).extracting(FileMeta::path).containsExactly("file:/tmp/a");
        assertThat(m.hint().isEmpty()).isTrue();
        byte[] v2 =
                ManifestCodec.encode(
                        span(), 42, version(file("a", 0, 7)), new CacheHint(List.of(whole("a"))));
        assertThat(v2[8]).isEqualTo(ManifestCodec.VERSION);
    }

    /**
     * A path listed twice (a file two restored manifests both brought, clipped two ways) takes two
     * numbers: the hint's numbers after it used to point one file too early. Found in a review.
     */
    @Test
    void aPathListedTwice_takesTwoNumbers_soLaterEntriesNameTheirOwnFiles() throws Exception {
        FileMeta x = file("x", 0, 7);
        List<List<FileMeta>> levels = new ArrayList<>();
        levels.add(new ArrayList<>(List.of(x.restoredWithClip(KeyGroupSpan.of(0, 3)))));
        levels.add(new ArrayList<>(List.of(x.restoredWithClip(KeyGroupSpan.of(4, 7)))));
        levels.add(new ArrayList<>(List.of(file("b", 0, 7))));
        Version v = new VersionSet(span(), levels, f -> {}).current();
        CacheHint hint = new CacheHint(List.of(blocks("b", 64), blocks("x", 8)));
        ManifestCodec.Manifest m = ManifestCodec.decode(ManifestCodec.encode(span(), 1, v, hint));
        assertThat(describe(m.hint())).containsExactly("file:/tmp/b [64]", "file:/tmp/x [8]");
    }

    @Test
    void aHintSectionThatDoesNotDecode_isLeftOut_andTheFilesStillRestore() throws Exception {
        byte[] base = payloadOf(ManifestCodec.encode(span(), 7, version(file("a", 0, 7))));
        // a file number past the manifest's two files, a repeated offset (a distance of 0), a cut
        // entry, an unknown entry kind
        byte[][] bad = {
            new ByteWriter(8).varint(1).varint(5).u8(1).toByteArray(),
            new ByteWriter(8).varint(1).varint(1).u8(0).varint(2).varint(9).varint(0).toByteArray(),
            new ByteWriter(8).varint(1).varint(1).u8(0).varint(3).varint(9).toByteArray(),
            new ByteWriter(8).varint(1).varint(1).u8(7).toByteArray()
        };
        for (byte[] section : bad) {
            ManifestCodec.Manifest m =
                    ManifestCodec.decode(
                            frame(
                                    withSection(base, ManifestCodec.SECTION_CACHE_HINT, section),
                                    ManifestCodec.VERSION));
            assertThat(m.hint().isEmpty()).isTrue();
            assertThat(m.levels().get(1)).extracting(FileMeta::path).containsExactly("file:/tmp/a");
        }
    }

    /** An entry naming {@code offsets}, of which {@code inMemory} the memory tier's (only its). */
    private static CacheHint.Entry blocks(String name, long[] offsets, long... inMemory) {
        return new CacheHint.Entry("file:/tmp/" + name, false, offsets, inMemory, inMemory);
    }

    /**
     * Entries with the offsets of their memory tier's blocks and, after "only", of those the disk
     * tier did not hold, as comparable strings.
     */
    private static List<String> describeMemory(CacheHint hint) {
        List<String> out = new ArrayList<>();
        for (CacheHint.Entry e : hint.entries()) {
            out.add(
                    e.file()
                            + " "
                            + Arrays.toString(e.memoryOffsets())
                            + (e.memoryOnlyOffsets().length == e.memoryOffsets().length
                                    ? ""
                                    : " only " + Arrays.toString(e.memoryOnlyOffsets())));
        }
        return out;
    }

    /**
     * Which blocks the memory tier held travels in a section of its own (type 2), which a reader
     * that does not know it skips; without one, no entry names a memory block.
     */
    @Test
    void theMemoryPart_roundTrips_inASectionOfItsOwn() throws Exception {
        Version v = version(file("a", 0, 3), file("b", 4, 7));
        CacheHint hint =
                new CacheHint(
                        List.of(
                                new CacheHint.Entry(
                                        "file:/tmp/b",
                                        false,
                                        new long[] {0, 4096, 9000},
                                        new long[] {0, 9000},
                                        new long[] {9000}),
                                whole("l0"),
                                blocks("a", new long[] {12})));
        byte[] encoded = ManifestCodec.encode(span(), 3, v, hint);
        ManifestCodec.Manifest m = ManifestCodec.decode(encoded);
        assertThat(describe(m.hint()))
                .containsExactly(
                        "file:/tmp/b [0, 4096, 9000]", "file:/tmp/l0 whole", "file:/tmp/a [12]");
        assertThat(describeMemory(m.hint()))
                .containsExactly(
                        "file:/tmp/b [0, 9000] only [9000]", "file:/tmp/l0 []", "file:/tmp/a []");
        assertThat(m.hint().memoryBlockCount()).isEqualTo(2);

        CacheHint unmarked =
                new CacheHint(List.of(blocks("b", 0, 4096, 9000), whole("l0"), blocks("a", 12)));
        byte[] without = ManifestCodec.encode(span(), 3, v, unmarked);
        ManifestCodec.Manifest plain = ManifestCodec.decode(without);
        assertThat(describe(plain.hint())).isEqualTo(describe(m.hint()));
        assertThat(plain.hint().memoryBlockCount()).isZero();
        assertThat(payloadOf(without))
                .as("the same hint unmarked: the same bytes, one section fewer")
                .hasSizeLessThan(payloadOf(encoded).length);
    }

    /**
     * A memory part that does not decode, or names a block or file the hint does not, is left out:
     * the hint stays, every block of it for the disk tier.
     */
    @Test
    void aMemoryPartThatDoesNotFitTheHint_isLeftOut_andTheHintStays() throws Exception {
        Version v = version(file("a", 0, 7));
        byte[] withHint =
                payloadOf(
                        ManifestCodec.encode(
                                span(), 7, v, new CacheHint(List.of(blocks("a", 100, 200)))));
        byte[] base = payloadOf(ManifestCodec.encode(span(), 7, v)); // version 1: no count
        byte[] hintSection = Arrays.copyOfRange(withHint, base.length + 1, withHint.length);
        // file 1 is "a"; file 0 is "l0", which the hint does not name. Per entry: file, then
        // the blocks only the memory tier held, then those both tiers held (count, distances)
        byte[][] bad = {
            new ByteWriter(8).varint(1).varint(1).varint(1).varint(150).varint(0).toByteArray(),
            new ByteWriter(8).varint(1).varint(0).varint(1).varint(100).varint(0).toByteArray(),
            new ByteWriter(8).varint(1).varint(1).varint(2).varint(100).varint(0).toByteArray(),
            new ByteWriter(8).varint(1).varint(1).varint(2).varint(100).toByteArray(),
            new ByteWriter(8).varint(1).varint(7).varint(1).varint(100).varint(0).toByteArray(),
            new ByteWriter(8)
                    .varint(1)
                    .varint(1)
                    .varint(1)
                    .varint(100)
                    .varint(1)
                    .varint(100)
                    .toByteArray(),
            // the same file twice; bytes after the last entry
            new ByteWriter(8)
                    .varint(2)
                    .varint(1)
                    .varint(1)
                    .varint(100)
                    .varint(0)
                    .varint(1)
                    .varint(0)
                    .varint(1)
                    .varint(200)
                    .toByteArray(),
            new ByteWriter(8)
                    .varint(1)
                    .varint(1)
                    .varint(1)
                    .varint(100)
                    .varint(0)
                    .varint(5)
                    .toByteArray()
        };
        for (byte[] memory : bad) {
            ByteWriter p = new ByteWriter(base.length + 64);
            p.raw(base, 0, base.length);
            p.varint(2);
            p.raw(hintSection, 0, hintSection.length);
            p.u8(ManifestCodec.SECTION_CACHE_HINT_MEMORY).bytes(memory);
            ManifestCodec.Manifest m = ManifestCodec.decode(frame(p.toByteArray(), (byte) 2));
            assertThat(describe(m.hint())).containsExactly("file:/tmp/a [100, 200]");
            assertThat(m.hint().memoryBlockCount()).isZero();
        }
        ByteWriter good = new ByteWriter(base.length + 64);
        good.raw(base, 0, base.length);
        good.varint(2);
        good.u8(ManifestCodec.SECTION_CACHE_HINT_MEMORY)
                .bytes(
                        new ByteWriter(8)
                                .varint(1)
                                .varint(1)
                                .varint(0)
                                .varint(1)
                                .varint(200)
                                .toByteArray());
        good.raw(hintSection, 0, hintSection.length);
        assertThat(describeMemory(ManifestCodec.decode(frame(good.toByteArray(), (byte) 2)).hint()))
                .as("the memory part may come before the hint")
                .containsExactly("file:/tmp/a [200] only []");
    }

    /**
     * A memory part naming a file the hint names whole is left out; of two memory parts, the first
     * counts.
     */
    @Test
    void aMemoryPartForAWholeFile_isLeftOut_andOfTwoTheFirstCounts() throws Exception {
        Version v = version(file("a", 0, 3), file("b", 4, 7));
        byte[] withHint =
                payloadOf(
                        ManifestCodec.encode(
                                span(),
                                7,
                                v,
                                new CacheHint(List.of(whole("a"), blocks("b", 100, 200)))));
        byte[] base = payloadOf(ManifestCodec.encode(span(), 7, v));
        byte[] hintSection = Arrays.copyOfRange(withHint, base.length + 1, withHint.length);
        // files: 0 "l0", 1 "a" (whole in the hint), 2 "b"
        byte[] forWhole =
                new ByteWriter(8).varint(1).varint(1).varint(1).varint(100).varint(0).toByteArray();
        byte[] first =
                new ByteWriter(8).varint(1).varint(2).varint(1).varint(100).varint(0).toByteArray();
        byte[] second =
                new ByteWriter(8).varint(1).varint(2).varint(0).varint(1).varint(200).toByteArray();
        ByteWriter p = new ByteWriter(base.length + 64);
        p.raw(base, 0, base.length);
        p.varint(2);
        p.raw(hintSection, 0, hintSection.length);
        p.u8(ManifestCodec.SECTION_CACHE_HINT_MEMORY).bytes(forWhole);
        assertThat(ManifestCodec.decode(frame(p.toByteArray(), (byte) 2)).hint().memoryBlockCount())
                .isZero();
        ByteWriter two = new ByteWriter(base.length + 64);
        two.raw(base, 0, base.length);
        two.varint(3);
        two.raw(hintSection, 0, hintSection.length);
        two.u8(ManifestCodec.SECTION_CACHE_HINT_MEMORY).bytes(first);
        two.u8(ManifestCodec.SECTION_CACHE_HINT_MEMORY).bytes(second);
        assertThat(describeMemory(ManifestCodec.decode(frame(two.toByteArray(), (byte) 2)).hint()))
                .containsExactly("file:/tmp/a []", "file:/tmp/b [100]");
    }

    @Test
    void aSectionOfAnUnknownType_isSkipped() throws Exception {
        Version v = version(file("a", 0, 7));
        byte[] withHint =
                payloadOf(
                        ManifestCodec.encode(
                                span(), 7, v, new CacheHint(List.of(blocks("a", 100)))));
        // the hint section, preceded by one of a type this code does not know
        byte[] base = payloadOf(ManifestCodec.encode(span(), 7, v)); // version 1: no count
        byte[] hintSection = Arrays.copyOfRange(withHint, base.length + 1, withHint.length);
        ByteWriter p = new ByteWriter(base.length + 64);
        p.raw(base, 0, base.length);
        p.varint(2).u8(99).bytes(new byte[] {1, 2, 3});
        p.raw(hintSection, 0, hintSection.length);
        ManifestCodec.Manifest m = ManifestCodec.decode(frame(p.toByteArray(), (byte) 2));
        assertThat(describe(m.hint())).containsExactly("file:/tmp/a [100]");
    }

    @Test
    void aRestore_keepsTheEntriesOfFilesItReadsUnclipped_interleavingTheManifests()
            throws Exception {
        // two stores' manifests; the new store takes key groups 0-5: store 0's "l0" (0-7) is
        // kept clipped to 0-3, store 1's "c" (6-7) is left out, "a", "b" and "d" are read whole
        byte[] m0 =
                ManifestCodec.encode(
                        KeyGroupSpan.of(0, 3),
                        5,
                        version(file("a", 0, 1), file("b", 2, 3)),
                        new CacheHint(
                                List.of(
                                        blocks("b", new long[] {1, 2}, 2),
                                        blocks("a", 3),
                                        whole("l0"))));
        byte[] m1 =
                ManifestCodec.encode(
                        KeyGroupSpan.of(4, 7),
                        6,
                        versionOf(file("d", 4, 5), file("c", 6, 7)),
                        new CacheHint(List.of(blocks("c", 8), blocks("d", 9))));
        RestorePlan plan =
                RestorePlan.of(
                        List.of(m0, m1),
                        KeyGroupSpan.of(0, 5),
                        3,
                        (UnaryOperator<String>) p -> p.replace("/tmp/", "/moved/"));
        assertThat(describe(plan.hint()))
                .as("l0 of store 0 is clipped (0-7 to 0-3): left out")
                .containsExactly("file:/moved/b [1, 2]", "file:/moved/d [9]", "file:/moved/a [3]");
        assertThat(describeMemory(plan.hint()))
                .as("the memory tier's blocks stay marked")
                .containsExactly("file:/moved/b [2]", "file:/moved/d []", "file:/moved/a []");
    }

    private static Version versionOf(FileMeta... l1) {
        List<List<FileMeta>> levels = new ArrayList<>();
        levels.add(new ArrayList<>());
        levels.add(new ArrayList<>(List.of(l1)));
        return new VersionSet(KeyGroupSpan.of(4, 7), levels, f -> {}).current();
    }

    private static KeyGroupSpan span() {
        return KeyGroupSpan.of(0, 7);
    }

    /** The payload of an encoded manifest (after magic, version and length; before the CRC). */
    private static byte[] payloadOf(byte[] manifest) {
        return Arrays.copyOfRange(manifest, 13, manifest.length - 4);
    }

    /** The version-1 {@code payload} with one section after it, for a version-2 manifest. */
    private static byte[] withSection(byte[] payload, int type, byte[] section) {
        ByteWriter p = new ByteWriter(payload.length + section.length + 8);
        p.raw(payload, 0, payload.length);
        p.varint(1).u8(type).bytes(section);
        return p.toByteArray();
    }

    /** A manifest of {@code payload} in format {@code version}, with a valid length and CRC. */
    private static byte[] frame(byte[] payload, byte version) {
        ByteWriter out = new ByteWriter(payload.length + 17);
        out.u64(ManifestCodec.MAGIC).u8(version).u32(payload.length);
        out.raw(payload, 0, payload.length);
        out.u32(SstFormat.crc32c(payload, 0, payload.length));
        return out.toByteArray();
    }
}
