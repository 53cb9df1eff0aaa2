package io.github.flinkstate.disagg.engine.sst;

import static io.github.flinkstate.disagg.engine.sst.SstTestFiles.key;
import static io.github.flinkstate.disagg.engine.sst.SstTestFiles.value;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.disagg.engine.cache.CacheHint;
import io.github.flinkstate.disagg.engine.cache.DiskCache;
import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.local.LocalFileSystem;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link SstReader#fillMemoryWithBlocks}, the warm-up's load of the blocks a cache hint marks as
 * the memory tier's: it makes exactly the named blocks resident (not the blocks read between them),
 * verified and decompressed, so that reads of them go nowhere else; it stays within its limit; a
 * named block that fails its CRC32C fails the fill and is not loaded, while a damaged block between
 * two named ones is neither checked nor loaded.
 */
class SstReaderMemoryFillTest {

    private static final int ENTRIES = 3_000;

    @TempDir File tmp;

    private final FileSystem fs = LocalFileSystem.getSharedInstance();

    /** The disk tiers the test opened, closed after it. */
    private final List<DiskCache> disks = new ArrayList<>();

    @AfterEach
    void closeDisks() {
        disks.forEach(DiskCache::close);
    }

    /**
     * A memory tier of 8 MiB over a disk tier (files are opened with their blocks' offsets, which
     * the visit of resident blocks needs, only with one).
     */
    private BlockCache caches() throws IOException {
        DiskCache disk = new DiskCache(new File(tmp, "disk-" + disks.size()), 64 << 20, 0);
        disks.add(disk);
        return new BlockCache(8 << 20, disk);
    }

    private Path file(BlockCompression compression) throws IOException {
        return SstTestFiles.write(fs, tmp, "f-" + compression + ".sst", ENTRIES, compression);
    }

    private SstReader open(Path p, BlockCache cache, ReadCounters counters) throws IOException {
        return SstReader.open(fs, p, cache, fs.getFileStatus(p).getLen(), counters);
    }

    /** The offsets of the blocks resident in {@code cache}. */
    private static Set<Long> resident(BlockCache cache) {
        Set<Long> offsets = new TreeSet<>();
        cache.visitResidentBlocks(
                new CacheHint.Visitor() {
                    @Override
                    public boolean wholeFile(String file, long length) {
                        return true;
                    }

                    @Override
                    public boolean block(String file, long offset, int length) {
                        offsets.add(offset);
                        return true;
                    }
                });
        return offsets;
    }

    /** The offsets of the blocks whose index {@code i} has {@code i % 3 == 1}. */
    private static long[] everyThirdBlock(SstReader r) {
        List<Long> named = new ArrayList<>();
        for (int i = 1; i < r.blockCount(); i += 3) {
            named.add(r.blockHandle(i).offset());
        }
        return named.stream().mapToLong(Long::longValue).toArray();
    }

    private static void flipByteOf(Path p, BlockHandle block) throws IOException {
        try (RandomAccessFile raf = new RandomAccessFile(new File(p.toUri()), "rw")) {
            long at = block.offset() + block.length() / 2;
            raf.seek(at);
            int b = raf.read();
            raf.seek(at);
            raf.write(b ^ 0x5A);
        }
    }

    @ParameterizedTest
    @EnumSource(BlockCompression.class)
    void loadsExactlyTheNamedBlocks_soReadsOfThemGoNowhereElse(BlockCompression compression)
            throws Exception {
        Path p = file(compression);
        BlockCache cache = caches();
        ReadCounters counters = new ReadCounters();
        SstReader r = open(p, cache, counters);
        try {
            assertThat(r.blockCount()).isGreaterThan(30);
            long[] named = everyThirdBlock(r);
            SstReader.BlockFill fill = r.fillMemoryWithBlocks(() -> false, null, named, 1L << 30);
            assertThat(fill.end()).isEqualTo(SstReader.BlockFill.End.DONE);
            assertThat(fill.memoryBytes()).isEqualTo(cache.weightedSize());
            Set<Long> expected = new TreeSet<>();
            for (long offset : named) {
                expected.add(offset);
            }
            assertThat(resident(cache)).as("resident blocks").isEqualTo(expected);
            long reads = counters.reads();
            int checked = 0;
            for (int k = 0; k < ENTRIES; k++) {
                int block = r.findBlock(key(k));
                if (block % 3 == 1) {
                    assertThat(r.get(key(k)).value()).isEqualTo(value(k));
                    checked++;
                }
            }
            assertThat(checked).isGreaterThan(ENTRIES / 4);
            assertThat(counters.reads()).as("reads of the loaded blocks").isEqualTo(reads);
            assertThat(r.fillMemoryWithBlocks(() -> false, null, named, 1L << 30).memoryBytes())
                    .as("a second fill finds them resident")
                    .isZero();
        } finally {
            r.close();
        }
    }

    /**
     * The warm-up's hinted disk fill with a memory part: marked blocks are loaded into the memory
     * tier in the same reads, within the limit; those only the memory tier held are not stored on
     * disk once loaded, and go to disk when they do not fit; the others go to disk as before.
     */
    @Test
    void aDiskFillWithAMemoryPart_loadsTheMarkedBlocks_andKeepsTheMemoryOnlyOnesOffDisk()
            throws Exception {
        Path p = file(BlockCompression.NONE);
        BlockCache cache = caches();
        SstReader r = open(p, cache, new ReadCounters());
        try {
            long[] at = new long[6];
            for (int i = 1; i <= 5; i++) {
                at[i] = r.blockHandle(i).offset();
            }
            long w1 = r.blockHandle(1).length() + BlockCache.ENTRY_OVERHEAD;
            long w2 = r.blockHandle(2).length() + BlockCache.ENTRY_OVERHEAD;
            SstReader.MemoryPart memory =
                    new SstReader.MemoryPart(
                            new long[] {at[1], at[2], at[3], at[4]},
                            new long[] {at[1], at[3]},
                            w1 + w2 + 10);
            SstReader.BlockFill fill =
                    r.fillDiskWithBlocks(
                            () -> false,
                            null,
                            new long[] {at[1], at[2], at[3], at[4], at[5]},
                            memory);
            assertThat(fill.end()).isEqualTo(SstReader.BlockFill.End.DONE);
            // a payload may be a byte or two shorter than the block as stored (its codec header)
            assertThat(fill.memoryBytes())
                    .isEqualTo(cache.weightedSize())
                    .isBetween(w1 + w2 - 4, w1 + w2);
            assertThat(resident(cache)).containsExactly(at[1], at[2]);
            DiskCache disk = cache.disk();
            String name = p.toString();
            assertThat(disk.holdsBlock(name, at[1])).as("memory only, loaded").isFalse();
            assertThat(disk.holdsBlock(name, at[2])).as("both tiers held it").isTrue();
            assertThat(disk.holdsBlock(name, at[3])).as("memory only, no room").isTrue();
            assertThat(disk.holdsBlock(name, at[4])).as("both, no room in memory").isTrue();
            assertThat(disk.holdsBlock(name, at[5])).as("the disk tier's").isTrue();
            assertThat(fill.bytes())
                    .as("bytes stored on disk: blocks 2 to 5 with their checksums")
                    .isEqualTo(
                            r.blockHandle(2).length()
                                    + r.blockHandle(3).length()
                                    + r.blockHandle(4).length()
                                    + r.blockHandle(5).length()
                                    + 4L * SstFormat.BLOCK_CRC_BYTES);
        } finally {
            r.close();
        }
    }

    @Test
    void endsBeforeABlockThatWouldPassTheLimit() throws Exception {
        Path p = file(BlockCompression.NONE);
        BlockCache cache = caches();
        SstReader r = open(p, cache, new ReadCounters());
        try {
            long[] all = new long[r.blockCount()];
            for (int i = 0; i < all.length; i++) {
                all[i] = r.blockHandle(i).offset();
            }
            long limit = 10L * (r.blockHandle(0).length() + BlockCache.ENTRY_OVERHEAD) + 100;
            SstReader.BlockFill fill = r.fillMemoryWithBlocks(() -> false, null, all, limit);
            assertThat(fill.end()).isEqualTo(SstReader.BlockFill.End.FULL);
            assertThat(fill.memoryBytes()).isEqualTo(cache.weightedSize()).isPositive();
            assertThat(cache.weightedSize()).isLessThanOrEqualTo(limit);
            assertThat(resident(cache)).hasSizeBetween(8, 10);
        } finally {
            r.close();
        }
    }

    @Test
    void aDamagedNamedBlockFails_andIsNotLoaded_butOneBetweenNamedBlocksIsNeitherCheckedNorLoaded()
            throws Exception {
        Path p = file(BlockCompression.NONE);
        long[] named;
        BlockHandle gap;
        BlockHandle second;
        try (AutoCloseableReader probe =
                new AutoCloseableReader(open(p, new BlockCache(0), new ReadCounters()))) {
            named = new long[] {probe.r.blockHandle(2).offset(), probe.r.blockHandle(4).offset()};
            gap = probe.r.blockHandle(3);
            second = probe.r.blockHandle(4);
        }
        flipByteOf(p, gap);
        BlockCache cache = caches();
        SstReader r = open(p, cache, new ReadCounters());
        try {
            SstReader.BlockFill fill = r.fillMemoryWithBlocks(() -> false, null, named, 1L << 30);
            assertThat(fill.end()).isEqualTo(SstReader.BlockFill.End.DONE);
            assertThat(resident(cache)).containsExactly(named[0], named[1]);
        } finally {
            r.close();
        }
        flipByteOf(p, second);
        BlockCache fresh = caches();
        SstReader again = open(p, fresh, new ReadCounters());
        try {
            assertThatThrownBy(() -> again.fillMemoryWithBlocks(() -> false, null, named, 1L << 30))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("f-NONE.sst");
            assertThat(resident(fresh)).as("the chunk held the damaged block").isEmpty();
        } finally {
            again.close();
        }
    }

    /** Closes a reader opened only to look at its index. */
    private record AutoCloseableReader(SstReader r) implements AutoCloseable {
        @Override
        public void close() {
            r.close();
        }
    }
}
