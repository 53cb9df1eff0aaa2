package io.github.flinkstate.disagg.engine.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.github.flinkstate.disagg.engine.testutil.LateFaults;
import java.io.File;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Whole-file copies read through memory mappings ({@code local-cache.mmap}): the same bytes as with
 * system calls, a copy that cannot be read is dropped (never served, never a crash), and an evicted
 * copy is unmapped, so that its disk space is freed when the cache evicts it rather than at some
 * later garbage collection.
 */
class DiskCacheMappedCopiesTest extends DiskCacheFixture {

    private DiskCache open(boolean map) throws Exception {
        cache = new DiskCache(new File(tmp, "cache"), 4 * MB, 0, map);
        return cache;
    }

    private void commit(String name, byte[] file) throws Exception {
        WriteThrough copy = cache.writeThrough(name);
        assertThat(copy).isNotNull();
        copy.write(file, 0, file.length);
        copy.commit(file.length);
    }

    private File onlyCopyFile() {
        File[] copies = new File(tmp, "cache").listFiles((d, n) -> n.startsWith("file-"));
        assertThat(copies).hasSize(1);
        return copies[0];
    }

    private static String canonical(File dir) {
        try {
            return dir.getCanonicalPath(); // the kernel names the real path, links resolved
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Lines of this process's memory map that name {@code dir}'s files. */
    private static List<String> mappingsUnder(File dir) throws Exception {
        return Files.readAllLines(Path.of("/proc/self/maps")).stream()
                .filter(l -> l.contains(canonical(dir)))
                .toList();
    }

    @Test
    void copies_areReadThroughAMapping_unlessMappingIsOff_withTheSameBytes() throws Exception {
        byte[] file = randomBytes(1, 300 * KB);
        for (boolean map : new boolean[] {true, false}) {
            open(map);
            commit("sst-1", file);
            assertThat(cache.wholeFileCount()).isEqualTo(1);
            assertThat(cache.mappedWholeFileCount()).isEqualTo(map ? 1 : 0);
            assertThat(cache.read("sst-1", 12_345, 4_096))
                    .isEqualTo(Arrays.copyOfRange(file, 12_345, 12_345 + 4_096));
            assertThat(cache.read("sst-1", file.length - 100, 100))
                    .as("the last bytes, checked against those written")
                    .isEqualTo(Arrays.copyOfRange(file, file.length - 100, file.length));
            assertThat(cache.read("sst-1", file.length - 10, 20)).as("past the end").isNull();
            cache.close();
        }
    }

    /**
     * A copy committed by a thread with its interrupt flag set (a flush or compaction thread being
     * stopped) is mapped as any other, and mapping stays on: the JDK's mapping call fails with
     * {@code ClosedByInterruptException} on such a thread, which counted as a mapping the system
     * refused and turned mapping off for the cache. Found in a review.
     */
    @Test
    void aCopyCommittedByAnInterruptedThread_isMapped_andMappingStaysOn() throws Exception {
        open(true);
        byte[] first = randomBytes(1, 300 * KB);
        WriteThrough copy = cache.writeThrough("sst-1");
        copy.write(first, 0, first.length);
        Thread.currentThread().interrupt();
        try {
            assertThat(copy.commit(first.length)).isTrue();
            assertThat(Thread.currentThread().isInterrupted())
                    .as("the interrupt is kept for the caller")
                    .isTrue();
        } finally {
            Thread.interrupted();
        }
        commit("sst-2", randomBytes(2, 300 * KB));
        assertThat(cache.wholeFileCount()).isEqualTo(2);
        assertThat(cache.mappedWholeFileCount()).isEqualTo(2);
        assertThat(cache.read("sst-1", 1_000, 4_096))
                .isEqualTo(Arrays.copyOfRange(first, 1_000, 1_000 + 4_096));
    }

    /**
     * Reads {@code length} bytes at {@code offset} of "sst-1" as the store does: bytes that differ
     * from {@code expected} are reported as corrupt (the store verifies checksums), and a fault the
     * JVM reports after the read returned is caught where the store catches it; null for both.
     */
    private byte[] readAsTheStore(long offset, int length, byte[] expected) {
        try {
            byte[] got = cache.read("sst-1", offset, length);
            LateFaults.deliver();
            if (got != null && !Arrays.equals(got, expected)) {
                cache.invalidate("sst-1", offset, "bytes differ (the test's check)");
                return null;
            }
            return got;
        } catch (InternalError lateFault) {
            cache.mappingFault(lateFault);
            return null;
        }
    }

    @Test
    void aMappedCopyTruncatedBehindTheCachesBack_isDropped_neverServed_andMappingStops()
            throws Exception {
        assumeTrue(new File("/proc/self/maps").canRead(), "needs Linux's /proc/self/maps");
        open(true);
        byte[] file = randomBytes(2, 300 * KB);
        commit("sst-1", file);
        try (RandomAccessFile raf = new RandomAccessFile(onlyCopyFile(), "rw")) {
            raf.setLength(100 * KB);
        }
        byte[] expected = Arrays.copyOfRange(file, 200 * KB, 204 * KB);
        // the page is wholly past the new end: the OS cannot supply it, the JVM raises
        // InternalError (in the read, caught there, or later, caught in readAsTheStore)
        assertThat(readAsTheStore(200 * KB, 4 * KB, expected)).isNull();
        assertThat(readAsTheStore(200 * KB, 4 * KB, expected))
                .as("read again with a system call: the copy is short")
                .isNull();
        assertThat(cache.invalidationCount()).isPositive();
        assertThat(cache.wholeFileCount()).isZero();
        assertThat(cache.usedBytes()).isZero();
        assertThat(mappingsUnder(new File(tmp, "cache"))).isEmpty();

        commit("sst-2", randomBytes(3, 300 * KB));
        assertThat(cache.wholeFileCount()).isEqualTo(1);
        assertThat(cache.mappedWholeFileCount()).as("no new mapping after a fault").isZero();
        cache.checkInvariants();
    }

    @Test
    void anEvictedOrForgottenCopy_isUnmapped() throws Exception {
        assumeTrue(new File("/proc/self/maps").canRead(), "needs Linux's /proc/self/maps");
        open(true);
        File dir = new File(tmp, "cache");
        commit("sst-1", randomBytes(3, 300 * KB));
        assertThat(mappingsUnder(dir)).hasSize(1);
        cache.forget("sst-1");
        assertThat(mappingsUnder(dir)).as("forgotten: deleted and unmapped").isEmpty();

        // eviction: blocks offered later need the room of the least recently used unit
        commit("sst-2", randomBytes(4, 1536 * KB));
        assertThat(mappingsUnder(dir)).hasSize(1);
        for (int i = 0; i < 48; i++) {
            cache.offer("other", i * 64L * KB, randomBytes(10 + i, 64 * KB));
        }
        assertThat(cache.wholeFileCount()).as("the copy was evicted").isZero();
        assertThat(mappingsUnder(dir)).as("evicted: unmapped (slabs are never mapped)").isEmpty();

        commit("sst-3", randomBytes(5, 300 * KB));
        assertThat(mappingsUnder(dir)).hasSize(1);
        cache.close();
        assertThat(mappingsUnder(dir)).as("closed").isEmpty();
    }
}
