package io.github.flinkstate.disagg.engine.sst;

import static io.github.flinkstate.disagg.engine.sst.SstTestFiles.key;
import static io.github.flinkstate.disagg.engine.sst.SstTestFiles.value;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.disagg.engine.cache.DiskCache;
import io.github.flinkstate.disagg.engine.key.EntryType;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.key.Versioned;
import java.io.File;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The SST trailer's format-version byte is covered by no checksum of the format, and it decides how
 * the bloom filter and the data blocks are decoded. Found in a review: a local disk-tier copy whose
 * version byte flipped from 5 to 4 passed every check, and every get of the file answered "absent"
 * (5,000 of 5,000 keys) with no error. The disk tier now checks what it holds against what entered
 * it, so such a copy is dropped and the primary file serves the reads: a whole-file copy's last
 * bytes, and every slab entry by a checksum of its own.
 */
class LocalCopyTrailerTest {

    private static final int ENTRIES = 2000;

    @TempDir File tmp;

    private final FileSystem fs = FileSystem.getLocalFileSystem();

    private static void checkAll(SstReader r) throws Exception {
        for (int i = 0; i < ENTRIES; i++) {
            Versioned v = r.get(key(i));
            assertThat(v).as("entry %d", i).isNotNull();
            assertThat(v.value()).isEqualTo(value(i));
        }
    }

    /** Flips bit 0 of the version byte of the trailer that ends at {@code end} in {@code f}. */
    private static void flipVersion(File f, long end) throws Exception {
        try (RandomAccessFile raf = new RandomAccessFile(f, "rw")) {
            long at = end - 9; // trailer: footer length, footer CRC, version, 8-byte magic
            raf.seek(at);
            int b = raf.read();
            assertThat(b).as("version byte").isEqualTo(SstFormat.VERSION);
            raf.seek(at);
            raf.write(b ^ 1);
        }
    }

    @Test
    void aWholeFileCopyWithAFlippedVersionByte_isDropped() throws Exception {
        DiskCache disk = new DiskCache(new File(tmp, "disk"), 64 << 20, 0);
        Path path = new Path(new Path(tmp.toURI()), "w.sst");
        SstWriter w =
                new SstWriter(
                        fs,
                        path,
                        1024,
                        10,
                        KeyGroupSpan.of(0, 3),
                        null,
                        BlockCompression.NONE,
                        disk.writeThrough(path.toString()));
        for (int i = 0; i < ENTRIES; i++) {
            w.add(key(i), i + 1, EntryType.PUT, value(i));
        }
        w.finish(null);
        assertThat(disk.holdsWholeFile(path.toString())).isTrue();
        File copy = only(new File(tmp, "disk"), ".sst");
        flipVersion(copy, copy.length());

        SstReader r =
                SstReader.open(
                        fs,
                        path,
                        new BlockCache(0, disk),
                        fs.getFileStatus(path).getLen(),
                        new ReadCounters(),
                        4,
                        64 << 10);
        assertThat(r.formatVersion()).isEqualTo(SstFormat.VERSION);
        checkAll(r);
        assertThat(disk.invalidationCount()).isPositive();
        r.close();
        disk.close();
    }

    @Test
    void aSlabTailWithAFlippedVersionByte_isDropped() throws Exception {
        DiskCache disk = new DiskCache(new File(tmp, "disk"), 64 << 20, 0);
        Path path = SstTestFiles.write(fs, tmp, "r.sst", ENTRIES, BlockCompression.NONE);
        long size = fs.getFileStatus(path).getLen();
        // a restored file: opening it offers its tail (metadata and trailer) to a slab
        SstReader first =
                SstReader.open(
                        fs, path, new BlockCache(0, disk), size, new ReadCounters(), 4, 64 << 10);
        first.close();
        File slab = only(new File(tmp, "disk"), ".blk");
        byte[] bytes = Files.readAllBytes(slab.toPath());
        long magicEnd = lastMagicEnd(bytes);
        flipVersion(slab, magicEnd);

        SstReader r =
                SstReader.open(
                        fs, path, new BlockCache(0, disk), size, new ReadCounters(), 4, 64 << 10);
        assertThat(r.formatVersion()).isEqualTo(SstFormat.VERSION);
        checkAll(r);
        assertThat(disk.invalidationCount()).isPositive();
        r.close();
        disk.close();
    }

    /** The end of the last SST magic in {@code b} (the trailer's end in a cached tail). */
    private static long lastMagicEnd(byte[] b) {
        long magic = SstFormat.MAGIC;
        for (int end = b.length; end >= 8; end--) {
            long m = 0;
            for (int i = end - 8; i < end; i++) {
                m = (m << 8) | (b[i] & 0xFF);
            }
            if (m == magic) {
                return end;
            }
        }
        throw new AssertionError("no SST trailer in the slab");
    }

    private static File only(File dir, String suffix) throws Exception {
        File[] files = dir.listFiles((d, n) -> n.endsWith(suffix));
        assertThat(files).as("local files *%s in %s", suffix, dir).hasSize(1);
        return files[0];
    }
}
