package io.github.flinkstate.disagg.engine.sst;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.disagg.engine.key.Bytes;
import io.github.flinkstate.disagg.engine.key.EntryType;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.key.Versioned;
import io.github.flinkstate.disagg.engine.testutil.LsmModelRunner;
import java.io.File;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Round trips and format checks of {@link SstWriter} / {@link SstReader}. */
class SstFormatTest {

    @TempDir File tmp;

    private final FileSystem fs = FileSystem.getLocalFileSystem();

    @Test
    void roundTrip_pointAndRangeReads_matchModel() throws Exception {
        long seed = 12345;
        Random rnd = new Random(seed);
        NavigableMap<byte[], byte[]> model = LsmModelRunner.newModel();
        for (int i = 0; i < 3000; i++) {
            byte[] v = new byte[rnd.nextInt(50)];
            rnd.nextBytes(v);
            model.put(LsmModelRunner.key(rnd.nextInt(8), rnd.nextInt(3), rnd.nextInt(5000)), v);
        }
        Path path = new Path(new Path(tmp.toURI()), "a.sst");
        SstWriter w = new SstWriter(fs, path, 512, 10, KeyGroupSpan.of(0, 7));
        long seq = 1;
        for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
            w.add(e.getKey(), seq++, EntryType.PUT, e.getValue());
        }
        w.addTombstone(LsmModelRunner.key(3, 1, 7), seq++);
        SstFooter footer = w.finish(null);
        assertThat(footer.entries()).isEqualTo(model.size());
        assertThat(footer.tombstoneCount()).isEqualTo(1);
        assertThat(footer.keyGroups()).isEqualTo(KeyGroupSpan.of(0, 7));
        assertThat(footer.range().lower()).isEqualTo(model.firstKey());
        assertThat(footer.dataBlocks()).isGreaterThan(10);

        SstReader r = SstReader.open(fs, path, new BlockCache(1 << 20), w.fileSize());
        assertThat(r.tombstones()).hasSize(1);
        for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
            Versioned got = r.get(e.getKey());
            assertThat(got).isNotNull();
            assertThat(got.value()).isEqualTo(e.getValue());
        }
        assertThat(r.get(LsmModelRunner.key(2, 2, 999_999))).isNull();
        // seek into the middle and iterate to the end
        byte[] mid = LsmModelRunner.key(4, 0, 0);
        SstIterator it = r.iterator();
        it.seek(mid);
        for (byte[] k : model.tailMap(mid, true).keySet()) {
            assertThat(it.valid()).isTrue();
            assertThat(it.key()).isEqualTo(k);
            it.next();
        }
        assertThat(it.valid()).isFalse();
    }

    @Test
    void writer_rejectsKeysOutOfOrderAndOutsideKeyGroups() throws Exception {
        Path path = new Path(new Path(tmp.toURI()), "b.sst");
        SstWriter w = new SstWriter(fs, path, 512, 10, KeyGroupSpan.of(0, 3));
        w.add(LsmModelRunner.key(1, 0, 5), 1, EntryType.PUT, new byte[1]);
        assertThatThrownBy(() -> w.add(LsmModelRunner.key(1, 0, 4), 2, EntryType.PUT, new byte[1]))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("out of order");
        assertThatThrownBy(() -> w.add(LsmModelRunner.key(1, 0, 5), 2, EntryType.PUT, new byte[1]))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> w.add(LsmModelRunner.key(9, 0, 5), 2, EntryType.PUT, new byte[1]))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("outside");
        w.abort();
        assertThat(fs.exists(path)).isFalse();
    }

    @Test
    void file_endsWithVersionAndMagic() throws Exception {
        Path path = new Path(new Path(tmp.toURI()), "c.sst");
        SstWriter w = new SstWriter(fs, path, 512, 10, KeyGroupSpan.of(0, 3));
        w.add(LsmModelRunner.key(0, 0, 1), 1, EntryType.DELETE, null);
        w.finish(null);
        try (RandomAccessFile f = new RandomAccessFile(new File(path.toUri()), "r")) {
            byte[] tail = new byte[9];
            f.seek(f.length() - 9);
            f.readFully(tail);
            assertThat(tail[0]).isEqualTo(SstFormat.VERSION);
            assertThat(new String(tail, 1, 8, StandardCharsets.US_ASCII)).isEqualTo("DISAGSST");
        }
        SstReader r = SstReader.open(fs, path, new BlockCache(0), -1);
        assertThat(r.get(LsmModelRunner.key(0, 0, 1)).type()).isEqualTo(EntryType.DELETE);
        assertThat(r.footer().deletes()).isEqualTo(1);
    }

    /** Writes the same random content with the given format version and checks every read path. */
    private void checkVersionRoundTrip(int version, String file) throws Exception {
        Random rnd = new Random(777 + version);
        NavigableMap<byte[], byte[]> model = LsmModelRunner.newModel();
        for (int i = 0; i < 4000; i++) {
            byte[] v = new byte[rnd.nextInt(40)];
            rnd.nextBytes(v);
            model.put(
                    LsmModelRunner.key(rnd.nextInt(4), rnd.nextInt(3), rnd.nextInt(20_000)),
                    rnd.nextInt(10) == 0 ? null : v);
        }
        Path path = new Path(new Path(tmp.toURI()), file);
        SstWriter w = new SstWriter(fs, path, 256, 10, KeyGroupSpan.of(0, 3), null, version);
        long seq = 1;
        for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
            byte type = e.getValue() == null ? EntryType.DELETE : EntryType.PUT;
            w.add(e.getKey(), seq++, type, e.getValue());
        }
        SstFooter footer = w.finish(null);
        assertThat(footer.dataBlocks()).isGreaterThan(20);
        try (RandomAccessFile f = new RandomAccessFile(new File(path.toUri()), "r")) {
            f.seek(f.length() - 9);
            assertThat(f.readByte()).isEqualTo((byte) version);
        }
        SstReader r = SstReader.open(fs, path, new BlockCache(1 << 20), w.fileSize());
        assertThat(r.formatVersion()).isEqualTo(version);
        for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
            Versioned got = r.get(e.getKey());
            assertThat(got).isNotNull();
            if (e.getValue() == null) {
                assertThat(got.type()).isEqualTo(EntryType.DELETE);
            } else {
                assertThat(got.type()).isEqualTo(EntryType.PUT);
                assertThat(got.value()).isEqualTo(e.getValue());
            }
        }
        // misses: between keys, before the first, after the last
        for (int i = 0; i < 2000; i++) {
            byte[] k = LsmModelRunner.key(rnd.nextInt(5), rnd.nextInt(4), rnd.nextInt(25_000));
            if (!model.containsKey(k)) {
                assertThat(r.get(k)).isNull();
            }
        }
        // iterator seeks to random targets (hits and misses) land on the ceiling key
        for (int i = 0; i < 300; i++) {
            byte[] target = LsmModelRunner.key(rnd.nextInt(4), rnd.nextInt(3), rnd.nextInt(20_000));
            SstIterator it = r.iterator();
            it.seek(target);
            byte[] expected = model.ceilingKey(target);
            if (expected == null) {
                assertThat(it.valid()).isFalse();
            } else {
                assertThat(it.valid()).isTrue();
                assertThat(it.key()).isEqualTo(expected);
                it.next();
                byte[] after = model.higherKey(expected);
                assertThat(it.valid()).isEqualTo(after != null);
                if (after != null) {
                    assertThat(it.key()).isEqualTo(after);
                }
            }
        }
        SstIterator all = r.iterator();
        all.seekToFirst();
        for (byte[] k : model.keySet()) {
            assertThat(all.valid()).isTrue();
            assertThat(all.key()).isEqualTo(k);
            all.next();
        }
        assertThat(all.valid()).isFalse();
    }

    @Test
    void version5_current_roundTrip() throws Exception {
        assertThat(SstFormat.VERSION).isEqualTo((byte) 5);
        checkVersionRoundTrip(5, "v5.sst");
    }

    @Test
    void version4_filesRemainReadable() throws Exception {
        checkVersionRoundTrip(4, "v4.sst");
    }

    /**
     * Version 5 with keys built to stress prefix compression: long shared prefixes, keys that are
     * prefixes of their successors, lengths from 2 to 40 bytes, restart points in every block.
     * Every present key is found, every absent one (including prefixes and extensions of present
     * keys) is not, and seeks to every present and absent key land on the ceiling.
     */
    @Test
    void version5_prefixCompressedKeys_lookupsAndSeeksMatchModel() throws Exception {
        Random rnd = new Random(55);
        NavigableMap<byte[], byte[]> model = LsmModelRunner.newModel();
        java.util.List<byte[]> probes = new java.util.ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            byte[] k = new byte[2 + rnd.nextInt(39)];
            k[0] = 0;
            k[1] = (byte) rnd.nextInt(4);
            for (int j = 2; j < k.length; j++) {
                k[j] = (byte) (j < 20 ? rnd.nextInt(3) : rnd.nextInt(256)); // long shared runs
            }
            byte[] v = new byte[rnd.nextInt(30)];
            rnd.nextBytes(v);
            if (rnd.nextInt(4) == 0) {
                probes.add(k); // absent unless drawn twice
            } else {
                model.put(k, v);
                model.put(java.util.Arrays.copyOf(k, k.length - 1), v); // its prefix, present too
            }
            probes.add(java.util.Arrays.copyOf(k, k.length + 1)); // an extension
        }
        model.remove(new byte[] {0});
        model.keySet().removeIf(k -> k.length < 2);
        Path path = new Path(new Path(tmp.toURI()), "v5-prefix.sst");
        SstWriter w = new SstWriter(fs, path, 512, 10, KeyGroupSpan.of(0, 3));
        long seq = 1;
        for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
            w.add(e.getKey(), seq++, EntryType.PUT, e.getValue());
        }
        w.finish(null);
        SstReader r = SstReader.open(fs, path, new BlockCache(1 << 20), w.fileSize());
        assertThat(r.formatVersion()).isEqualTo(5);
        for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
            Versioned got = r.get(e.getKey());
            assertThat(got).as(Bytes.hex(e.getKey())).isNotNull();
            assertThat(got.value()).isEqualTo(e.getValue());
        }
        probes.addAll(model.keySet());
        for (byte[] p : probes) {
            if (!model.containsKey(p)) {
                assertThat(r.get(p)).as(Bytes.hex(p)).isNull();
            }
            SstIterator it = r.iterator();
            it.seek(p);
            byte[] expected = model.ceilingKey(p);
            assertThat(it.valid()).isEqualTo(expected != null);
            if (expected != null) {
                assertThat(it.key()).as(Bytes.hex(p)).isEqualTo(expected);
            }
        }
        // one iterator seeking forward through increasing targets (seeks within a block)
        SstIterator forward = r.iterator();
        forward.seekToFirst();
        java.util.TreeSet<byte[]> sorted = new java.util.TreeSet<>(Bytes::compare);
        sorted.addAll(probes);
        for (byte[] p : sorted) {
            forward.seek(p);
            byte[] expected = model.ceilingKey(p);
            assertThat(forward.valid()).isEqualTo(expected != null);
            if (expected != null) {
                assertThat(forward.key()).as(Bytes.hex(p)).isEqualTo(expected);
            }
        }
    }

    @Test
    void version5_indexSeparators_areShortAndBetweenTheBlocks() {
        Random rnd = new Random(5);
        for (int i = 0; i < 20_000; i++) {
            byte[] a = new byte[1 + rnd.nextInt(12)];
            byte[] b = new byte[1 + rnd.nextInt(12)];
            for (int j = 0; j < a.length; j++) {
                a[j] = (byte) (rnd.nextInt(4) == 0 ? 0xFF : rnd.nextInt(3));
            }
            for (int j = 0; j < b.length; j++) {
                b[j] = j < a.length && rnd.nextBoolean() ? a[j] : (byte) rnd.nextInt(4);
            }
            int c = Bytes.compare(a, b);
            if (c == 0) {
                continue;
            }
            byte[] last = c < 0 ? a : b;
            byte[] next = c < 0 ? b : a;
            byte[] sep = SstWriter.separator(last, next);
            assertThat(Bytes.compare(last, sep)).as(Bytes.hex(last)).isLessThanOrEqualTo(0);
            assertThat(Bytes.compare(sep, next)).as(Bytes.hex(next)).isLessThan(0);
            assertThat(sep.length).isLessThanOrEqualTo(last.length);
        }
        // the keyed backend's keys: key group, state id and lengths shared, keys differ late
        byte[] last = {0, 7, 1, 2, 3, 4, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0x10, 0x20, 0, 0, 0, 1, 0};
        byte[] next = {0, 7, 1, 2, 3, 4, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0x13, 0x01, 0, 0, 0, 1, 0};
        assertThat(SstWriter.separator(last, next))
                .isEqualTo(new byte[] {0, 7, 1, 2, 3, 4, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0x11});
    }

    @Test
    void version5_dataBlockLayout_matchesSpec() throws Exception {
        // the version-5 worked example of docs/format/disagg-sst.md: two keys sharing 3 bytes
        Path path = new Path(new Path(tmp.toURI()), "ex5.sst");
        SstWriter w = new SstWriter(fs, path, 4096, 10, KeyGroupSpan.of(0, 3));
        w.add(new byte[] {0, 1, 0, 0x37}, 1, EntryType.PUT, new byte[] {0x76});
        w.add(new byte[] {0, 1, 0, 0x38}, 2, EntryType.PUT, new byte[] {0x77});
        w.finish(null);
        byte[] file = java.nio.file.Files.readAllBytes(new File(path.toUri()).toPath());
        assertThat(file[file.length - 9]).isEqualTo((byte) 5);
        assertThat(java.util.Arrays.copyOf(file, 26))
                .isEqualTo(
                        new byte[] {
                            0, // codec: stored as is
                            0,
                            4,
                            0,
                            1,
                            0,
                            0x37,
                            1,
                            1,
                            1,
                            0x76, // restart entry: whole key
                            3,
                            1,
                            0x38,
                            2,
                            1,
                            1,
                            0x77, // shares 3 bytes, 1 byte of its own
                            0,
                            0,
                            0,
                            0, // restart[0] = 0
                            0,
                            0,
                            0,
                            1 // one restart point
                        });
        int stored = u32At(file, 26);
        assertThat(stored).isEqualTo(SstFormat.crc32c(file, 0, 26));
    }

    @Test
    void version5_malformedSharedPrefix_isReportedWithFileAndOffset() throws Exception {
        byte[] restartShares = {
            2, 2, 0x37, 0x38, 1, 1, 1, 0x76, 0, 0, 0, 0, 0, 0, 0, 1
        }; // the restart entry claims 2 shared bytes
        assertThatThrownBy(
                        () ->
                                DataBlock.get(
                                        restartShares, 5, new byte[] {0, 1, 0, 0x37}, "f.sst", 100))
                .hasMessageContaining("f.sst")
                .hasMessageContaining("offset 100")
                .hasMessageContaining("restart entry shares 2 bytes");
        assertThatThrownBy(() -> new DataBlock.Cursor(restartShares, 5, "f.sst", 100))
                .hasMessageContaining("f.sst")
                .hasMessageContaining("shares 2 bytes of a 0-byte previous key");
        byte[] sharesTooMuch = {
            0, 2, 0x37, 0x38, 1, 1, 1, 0x76, 9, 1, 0x39, 2, 1, 1, 0x77, 0, 0, 0, 0, 0, 0, 0, 1
        }; // the second entry claims 9 bytes of a 2-byte key
        DataBlock.Cursor c = new DataBlock.Cursor(sharesTooMuch, 5, "f.sst", 100);
        assertThat(c.key()).isEqualTo(new byte[] {0x37, 0x38});
        assertThatThrownBy(c::next)
                .hasMessageContaining("f.sst")
                .hasMessageContaining("offset 108")
                .hasMessageContaining("shares 9 bytes of a 2-byte previous key");
    }

    @Test
    void version3_filesRemainReadable() throws Exception {
        checkVersionRoundTrip(3, "v3.sst");
    }

    @Test
    void version2_filesRemainReadable() throws Exception {
        checkVersionRoundTrip(2, "v2.sst");
    }

    @Test
    void bloomPrefixes_answerPrefixProbes_andOlderFilesNeverSkip() throws Exception {
        Path path = new Path(new Path(tmp.toURI()), "prefix.sst");
        // prefix = key group (2 bytes) + namespace byte, as LsmModelRunner's keys
        SstWriter w =
                new SstWriter(
                        fs, path, 256, 10, KeyGroupSpan.of(0, 3), k -> k.length >= 3 ? 3 : -1);
        long seq = 1;
        for (int n = 100; n < 600; n++) { // three digits: sorted as numbers
            w.add(LsmModelRunner.key(1, 0, n), seq++, EntryType.PUT, new byte[] {1});
        }
        for (int n = 100; n < 600; n++) { // three digits: sorted as numbers
            w.add(LsmModelRunner.key(2, 1, n), seq++, EntryType.PUT, new byte[] {2});
        }
        SstFooter footer = w.finish(null);
        assertThat(footer.bloomHasPrefixes()).isTrue();
        SstReader r = SstReader.open(fs, path, new BlockCache(1 << 20), w.fileSize());
        assertThat(r.mightContainPrefix(new byte[] {0, 1, 0})).isTrue();
        assertThat(r.mightContainPrefix(new byte[] {0, 2, 1})).isTrue();
        int absentSaidMaybe = 0;
        for (int kg = 0; kg < 4; kg++) {
            for (int ns = 0; ns < 100; ns++) {
                if ((kg == 1 && ns == 0) || (kg == 2 && ns == 1)) {
                    continue;
                }
                if (r.mightContainPrefix(new byte[] {0, (byte) kg, (byte) ns})) {
                    absentSaidMaybe++;
                }
            }
        }
        assertThat(absentSaidMaybe).as("false positives of 398 absent prefixes").isLessThan(20);
        // whole keys stay in the filter
        assertThat(r.mightContain(LsmModelRunner.key(1, 0, 107))).isTrue();

        Path v2 = new Path(new Path(tmp.toURI()), "noprefix.sst");
        SstWriter old = new SstWriter(fs, v2, 256, 10, KeyGroupSpan.of(0, 3), null, 2);
        old.add(LsmModelRunner.key(1, 0, 1), 1, EntryType.PUT, new byte[] {1});
        assertThat(old.finish(null).bloomHasPrefixes()).isFalse();
        SstReader o = SstReader.open(fs, v2, new BlockCache(1 << 20), old.fileSize());
        assertThat(o.mightContainPrefix(new byte[] {0, 3, 9}))
                .as("no prefixes: never skip")
                .isTrue();
    }

    @Test
    void version1_filesRemainReadable() throws Exception {
        checkVersionRoundTrip(1, "v1.sst");
    }

    @Test
    void version2_dataBlockLayout_matchesSpec() throws Exception {
        // the worked example of docs/format/disagg-sst.md (versions 2 and 3 store blocks alike)
        Path path = new Path(new Path(tmp.toURI()), "ex.sst");
        SstWriter w = new SstWriter(fs, path, 4096, 10, KeyGroupSpan.of(0, 3), null, 3);
        w.add(new byte[] {0, 1, 0, 0x37}, 1, EntryType.PUT, new byte[] {0x76});
        w.finish(null);
        byte[] file = java.nio.file.Files.readAllBytes(new File(path.toUri()).toPath());
        byte[] block = java.util.Arrays.copyOf(file, 17);
        assertThat(block)
                .isEqualTo(new byte[] {4, 0, 1, 0, 0x37, 1, 1, 1, 0x76, 0, 0, 0, 0, 0, 0, 0, 1});
        int crc = SstFormat.crc32c(file, 0, 17);
        assertThat(u32At(file, 17)).isEqualTo(crc);
    }

    @Test
    void version4_storedBlockStartsWithItsCodec_matchesSpec() throws Exception {
        // the version-4 worked example: codec byte 0, then the version-2 payload
        Path path = new Path(new Path(tmp.toURI()), "ex4.sst");
        SstWriter w = new SstWriter(fs, path, 4096, 10, KeyGroupSpan.of(0, 3), null, 4);
        w.add(new byte[] {0, 1, 0, 0x37}, 1, EntryType.PUT, new byte[] {0x76});
        w.finish(null);
        byte[] file = java.nio.file.Files.readAllBytes(new File(path.toUri()).toPath());
        assertThat(file[file.length - 9]).isEqualTo(SstFormat.VERSION_4).isEqualTo((byte) 4);
        assertThat(java.util.Arrays.copyOf(file, 18))
                .isEqualTo(new byte[] {0, 4, 0, 1, 0, 0x37, 1, 1, 1, 0x76, 0, 0, 0, 0, 0, 0, 0, 1});
        int stored = u32At(file, 18);
        assertThat(stored).isEqualTo(SstFormat.crc32c(file, 0, 18));
    }

    @Test
    void lz4_roundTrip_smallerFile_andMixesWithUncompressedBlocks() throws Exception {
        Random rnd = new Random(4);
        NavigableMap<byte[], byte[]> model = LsmModelRunner.newModel();
        for (int i = 0; i < 5000; i++) {
            byte[] v;
            if (i % 10 == 0) {
                v = new byte[200]; // incompressible: such blocks may be stored as they are
                rnd.nextBytes(v);
            } else {
                v = ("value-" + (i % 37) + "-" + "x".repeat(i % 50)).getBytes();
            }
            model.put(LsmModelRunner.key(rnd.nextInt(4), rnd.nextInt(3), rnd.nextInt(50_000)), v);
        }
        long[] sizes = new long[2];
        for (BlockCompression c : BlockCompression.values()) {
            Path path = new Path(new Path(tmp.toURI()), c + ".sst");
            SstWriter w = new SstWriter(fs, path, 1024, 10, KeyGroupSpan.of(0, 3), null, c);
            long seq = 1;
            for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
                w.add(e.getKey(), seq++, EntryType.PUT, e.getValue());
            }
            w.finish(null);
            sizes[c.ordinal()] = w.fileSize();
            SstReader r = SstReader.open(fs, path, new BlockCache(1 << 20), w.fileSize());
            assertThat(r.formatVersion()).isEqualTo(SstFormat.VERSION);
            for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
                assertThat(r.get(e.getKey()).value()).isEqualTo(e.getValue());
            }
            SstIterator it = r.iterator();
            it.seekToFirst();
            for (byte[] k : model.keySet()) {
                assertThat(it.valid()).isTrue();
                assertThat(it.key()).isEqualTo(k);
                it.next();
            }
            assertThat(it.valid()).isFalse();
        }
        assertThat(sizes[BlockCompression.LZ4.ordinal()])
                .as("LZ4 file size against the uncompressed one")
                .isLessThan(sizes[BlockCompression.NONE.ordinal()] * 3 / 4);
    }

    /**
     * One entry over 64 MiB gets a data block of its own. Compressed, it was written (the writer
     * had no limit) but could never be read back: the reader refuses an LZ4 payload over 64 MiB, so
     * every read and every compaction of the file failed. Such a block is now stored uncompressed.
     * Found in a review.
     */
    @Test
    void version4_anEntryOverTheCompressedPayloadLimit_isReadBack() throws Exception {
        Path path = new Path(new Path(tmp.toURI()), "big.sst");
        SstWriter w =
                new SstWriter(
                        fs, path, 4096, 10, KeyGroupSpan.of(0, 3), null, BlockCompression.LZ4);
        byte[] big =
                new byte[BlockCompression.MAX_COMPRESSED_PAYLOAD + 1024]; // zeros: compressible
        big[big.length - 1] = 7;
        w.add(LsmModelRunner.key(1, 0, 1), 1, EntryType.PUT, "small".getBytes());
        w.add(LsmModelRunner.key(1, 0, 2), 2, EntryType.PUT, big);
        w.add(LsmModelRunner.key(1, 0, 3), 3, EntryType.PUT, "small".getBytes());
        w.finish(null);
        SstReader r = SstReader.open(fs, path, new BlockCache(0), w.fileSize());
        try {
            assertThat(r.get(LsmModelRunner.key(1, 0, 2)).value()).isEqualTo(big);
            assertThat(r.get(LsmModelRunner.key(1, 0, 3)).value()).isEqualTo("small".getBytes());
        } finally {
            r.close();
        }
    }

    @Test
    void version4_badCodecOrUndecompressibleBlock_isReportedWithFileAndOffset() throws Exception {
        Path path = new Path(new Path(tmp.toURI()), "lz.sst");
        SstWriter w =
                new SstWriter(
                        fs, path, 4096, 10, KeyGroupSpan.of(0, 3), null, BlockCompression.LZ4);
        for (int i = 0; i < 50; i++) {
            w.add(
                    LsmModelRunner.key(1, 0, 10 + i),
                    i + 1,
                    EntryType.PUT,
                    "aaaaaaaaaaaaaaaa".getBytes());
        }
        w.finish(null);
        File f = new File(path.toUri());
        byte[] good = java.nio.file.Files.readAllBytes(f.toPath());
        assertThat(good[0]).as("first block compressed").isEqualTo(BlockCompression.CODEC_LZ4);
        SstReader probe = SstReader.open(fs, path, new BlockCache(0), good.length);
        int storedLength = probe.blockHandle(0).length();
        probe.close();

        // an unknown codec with a valid checksum
        byte[] badCodec = good.clone();
        badCodec[0] = 7;
        rewriteCrc(badCodec, storedLength);
        java.nio.file.Files.write(f.toPath(), badCodec);
        SstReader r1 = SstReader.open(fs, path, new BlockCache(0), badCodec.length);
        assertThatThrownBy(() -> r1.get(LsmModelRunner.key(1, 0, 13)))
                .hasMessageContaining(path.toString())
                .hasMessageContaining("at offset 0")
                .hasMessageContaining("unknown block codec 7");

        // LZ4 data cut short, with a valid checksum: the decompressor fails, not the JVM
        byte[] cut = good.clone();
        for (int i = storedLength - 6; i < storedLength; i++) {
            cut[i] = (byte) 0xFF;
        }
        rewriteCrc(cut, storedLength);
        java.nio.file.Files.write(f.toPath(), cut);
        SstReader r2 = SstReader.open(fs, path, new BlockCache(0), cut.length);
        assertThatThrownBy(() -> r2.get(LsmModelRunner.key(1, 0, 13)))
                .hasMessageContaining(path.toString())
                .hasMessageContaining("Malformed data block");

        // a flipped byte without a new checksum is caught by the checksum first
        byte[] flipped = good.clone();
        flipped[5] ^= 0x20;
        java.nio.file.Files.write(f.toPath(), flipped);
        SstReader r3 = SstReader.open(fs, path, new BlockCache(0), flipped.length);
        assertThatThrownBy(() -> r3.get(LsmModelRunner.key(1, 0, 13)))
                .hasMessageContaining("CRC32C mismatch");
    }

    /** The big-endian u32 at {@code at}. */
    private static int u32At(byte[] b, int at) {
        return ((b[at] & 0xFF) << 24)
                | ((b[at + 1] & 0xFF) << 16)
                | ((b[at + 2] & 0xFF) << 8)
                | (b[at + 3] & 0xFF);
    }

    private static void rewriteCrc(byte[] file, int storedLength) {
        int crc = SstFormat.crc32c(file, 0, storedLength);
        file[storedLength] = (byte) (crc >>> 24);
        file[storedLength + 1] = (byte) (crc >>> 16);
        file[storedLength + 2] = (byte) (crc >>> 8);
        file[storedLength + 3] = (byte) crc;
    }

    @Test
    void version2_malformedOffsetArray_isReportedWithFileAndOffset() {
        byte[] entry = {4, 0, 1, 0, 0x37, 1, 1, 1, 0x76};
        byte[] badCount = java.util.Arrays.copyOf(entry, entry.length + 8);
        badCount[badCount.length - 1] = 99; // 99 entries cannot fit
        assertThatThrownBy(
                        () -> DataBlock.get(badCount, 2, new byte[] {0, 1, 0, 0x37}, "f.sst", 100))
                .hasMessageContaining("f.sst")
                .hasMessageContaining("offset 100")
                .hasMessageContaining("bad entry count 99");
        byte[] badOffset = java.util.Arrays.copyOf(entry, entry.length + 8);
        badOffset[entry.length + 3] = 50; // offset[0] = 50, past the entries region
        badOffset[badOffset.length - 1] = 1;
        assertThatThrownBy(
                        () -> DataBlock.get(badOffset, 2, new byte[] {0, 1, 0, 0x37}, "f.sst", 100))
                .hasMessageContaining("f.sst")
                .hasMessageContaining("outside entries region");
        assertThatThrownBy(() -> new DataBlock.Cursor(badCount, 2, "f.sst", 100))
                .hasMessageContaining("f.sst")
                .hasMessageContaining("bad entry count");
    }

    @Test
    void unknownVersion_isRejectedNamingFileAndVersion() throws Exception {
        Path path = new Path(new Path(tmp.toURI()), "v9.sst");
        SstWriter w = new SstWriter(fs, path, 512, 10, KeyGroupSpan.of(0, 3));
        w.add(LsmModelRunner.key(0, 0, 1), 1, EntryType.PUT, new byte[1]);
        w.finish(null);
        try (RandomAccessFile f = new RandomAccessFile(new File(path.toUri()), "rw")) {
            f.seek(f.length() - 9);
            f.writeByte(9);
        }
        assertThatThrownBy(() -> SstReader.open(fs, path, new BlockCache(0), -1))
                .hasMessageContaining(path.toString())
                .hasMessageContaining("Unsupported SST version 9");
    }

    @Test
    void blockedBloomFilter_noFalseNegatives_fewFalsePositives_oneCacheLinePerKey()
            throws Exception {
        int n = 20_000;
        long[] hashes = new long[n];
        for (int i = 0; i < n; i++) {
            hashes[i] = BloomFilter.hash(LsmModelRunner.key(i % 8, 0, i));
        }
        BloomFilter b = BloomFilter.build(hashes, n, 10, true);
        assertThat((b.sizeBytes() - 1) % BloomFilter.BLOCK_BYTES).isZero();
        int falsePositives = 0;
        for (int i = 0; i < n; i++) {
            assertThat(b.mightContain(LsmModelRunner.key(i % 8, 0, i))).isTrue();
            if (b.mightContain(LsmModelRunner.key(i % 8, 1, i))) {
                falsePositives++;
            }
        }
        // a standard filter at 10 bits per key has about 0.8%; blocking costs a little
        assertThat(falsePositives).isLessThan(n * 25 / 1000);
        // survives its serialized form, and every key sets bits inside one 64-byte block
        ByteWriter w = new ByteWriter(b.sizeBytes());
        b.encode(w);
        BloomFilter decoded = BloomFilter.decode(w.toByteArray(), true);
        for (int i = 0; i < n; i++) {
            assertThat(decoded.mightContainHash(hashes[i])).isTrue();
        }
        for (int i = 0; i < 200; i++) {
            BloomFilter one = BloomFilter.build(new long[] {hashes[i]}, 1, 400, true);
            ByteWriter ow = new ByteWriter(one.sizeBytes());
            one.encode(ow);
            byte[] bits = java.util.Arrays.copyOfRange(ow.toByteArray(), 1, one.sizeBytes());
            int first = -1;
            int last = -1;
            for (int j = 0; j < bits.length; j++) {
                if (bits[j] != 0) {
                    first = first < 0 ? j : first;
                    last = j;
                }
            }
            assertThat(first / BloomFilter.BLOCK_BYTES).isEqualTo(last / BloomFilter.BLOCK_BYTES);
        }
        assertThatThrownBy(() -> BloomFilter.decode(new byte[] {7, 0, 0, 0}, true))
                .hasMessageContaining("not a whole number of 64-byte blocks");
    }

    @Test
    void blockedBloomFilter_sizeIsWholeBlocksUpToTheArrayLimit() {
        assertThat(BloomFilter.arrayBytes(10, true)).isEqualTo(BloomFilter.BLOCK_BYTES);
        assertThat(BloomFilter.arrayBytes(513, true)).isEqualTo(2 * BloomFilter.BLOCK_BYTES);
        assertThat(BloomFilter.arrayBytes(10, false)).isEqualTo(8);
        // more bits than a Java array holds: capped, and still whole blocks for the reader
        int capped = BloomFilter.arrayBytes(40_000_000_000L, true);
        assertThat(capped % BloomFilter.BLOCK_BYTES).isZero();
        assertThat(capped).isGreaterThan(Integer.MAX_VALUE - 2 * BloomFilter.BLOCK_BYTES);
        assertThat(BloomFilter.arrayBytes(40_000_000_000L, false))
                .isEqualTo(Integer.MAX_VALUE - BloomFilter.BLOCK_BYTES);
    }

    @Test
    void bloomFilter_hasNoFalseNegatives() {
        long[] hashes = new long[1000];
        for (int i = 0; i < hashes.length; i++) {
            hashes[i] = BloomFilter.hash(LsmModelRunner.key(0, 0, i));
        }
        BloomFilter b = BloomFilter.build(hashes, hashes.length, 10, false);
        int falsePositives = 0;
        for (int i = 0; i < 1000; i++) {
            assertThat(b.mightContain(LsmModelRunner.key(0, 0, i))).isTrue();
            if (b.mightContain(LsmModelRunner.key(0, 1, i))) {
                falsePositives++;
            }
        }
        assertThat(falsePositives).isLessThan(100);
    }

    @Test
    void bytes_prefixLimit() {
        assertThat(Bytes.prefixLimit(new byte[] {1, 2})).isEqualTo(new byte[] {1, 3});
        assertThat(Bytes.prefixLimit(new byte[] {1, (byte) 0xFF})).isEqualTo(new byte[] {2});
        assertThat(Bytes.prefixLimit(new byte[] {(byte) 0xFF})).isNull();
    }
}
