package io.github.flinkstate.disagg.engine.cache;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import org.junit.jupiter.api.Test;

/**
 * A write-through copy takes disk space while it grows, before it is committed: that space counts
 * against the disk tier's capacity as it grows, so the cache directory never holds more than the
 * capacity. Found in a review: the temp file of a flush's or compaction's copy was counted only at
 * commit, so a full cache plus the copies being written could exceed the configured size by a file
 * per writer (up to the target file size each).
 */
class WriteThroughSpaceTest extends DiskCacheFixture {

    @Test
    void aGrowingCopy_evictsAsItGrows_andTheDirectoryStaysWithinTheCapacity() throws Exception {
        File dir = new File(tmp, "cache");
        cache = new DiskCache(dir, 4 * MB, 0);
        cache.liveBytes(4 * MB); // whole files may fill the capacity
        for (int i = 0; i < 16; i++) { // a full cache of blocks
            cache.offer("old", (long) i * 256 * KB, randomBytes(i, 256 * KB));
        }
        assertThat(directoryBytes(dir)).isEqualTo(4 * MB);

        WriteThrough copy = cache.writeThrough("new", 3 * MB);
        assertThat(copy).isNotNull();
        byte[] file = randomBytes(99, (int) (3 * MB));
        for (int off = 0; off < file.length; off += 64 * KB) {
            copy.write(file, off, 64 * KB);
            assertThat(directoryBytes(dir))
                    .as("bytes in the cache directory after %d bytes copied", off + 64 * KB)
                    .isLessThanOrEqualTo(4 * MB);
        }
        assertThat(copy.commit(file.length)).isTrue();
        assertThat(cache.read("new", 5 * KB, 100)).isEqualTo(slice(file, 5 * KB, 100));
        assertThat(cache.usedBytes()).isLessThanOrEqualTo(4 * MB);
        assertThat(directoryBytes(dir)).isLessThanOrEqualTo(4 * MB);
        cache.checkInvariants();
    }

    @Test
    void aCopyLargerThanTheCapacity_isAbandonedWhileItGrows_andFreesItsSpace() throws Exception {
        File dir = new File(tmp, "cache");
        cache = new DiskCache(dir, 2 * MB, 0);
        cache.liveBytes(2 * MB);
        WriteThrough copy = cache.writeThrough("huge");
        byte[] chunk = randomBytes(1, 64 * KB);
        for (int i = 0; i < 64; i++) { // 4 MiB
            copy.write(chunk, 0, chunk.length);
            assertThat(directoryBytes(dir)).isLessThanOrEqualTo(2 * MB);
        }
        assertThat(copy.commit(4 * MB)).isFalse();
        assertThat(cache.usedBytes()).as("its reservation was given back").isZero();
        cache.offer("f", 0, randomBytes(2, 256 * KB));
        assertThat(cache.read("f", 0, 256 * KB)).isEqualTo(randomBytes(2, 256 * KB));
        cache.checkInvariants();
    }

    /**
     * A copy that grows past the whole-file limit (the share of the capacity whole files may take)
     * is abandoned as soon as it does, not at commit: it evicts at most the one reservation step it
     * took while it still fitted, and no whole file.
     */
    @Test
    void aCopyPastTheWholeFileLimit_isAbandonedThere_evictingAtMostOneStep() throws Exception {
        File dir = new File(tmp, "cache");
        cache = new DiskCache(dir, 4 * MB, 0);
        cache.liveBytes(100 * MB); // the state outgrew the cache: whole files get half of it
        WriteThrough first = cache.writeThrough("first");
        byte[] firstFile = randomBytes(5, (int) (1536 * KB));
        first.write(firstFile, 0, firstFile.length);
        assertThat(first.commit(firstFile.length)).isTrue();
        for (int i = 0; i < 10; i++) { // blocks fill the rest: 1.5 + 2.5 MiB
            cache.offer("blocks", (long) i * 256 * KB, randomBytes(i, 256 * KB));
        }
        assertThat(cache.read("first", 0, 100)).isNotNull(); // the most recent unit now
        long evictions = cache.evictionCount();

        WriteThrough second = cache.writeThrough("second"); // admitted: its length is unknown
        byte[] chunk = randomBytes(6, 64 * KB);
        for (int i = 0; i < 24; i++) { // 1.5 MiB: past the whole-file limit of 2 MiB
            second.write(chunk, 0, chunk.length);
        }
        assertThat(second.abandoned()).isTrue();
        assertThat(second.commit(24 * 64 * KB)).isFalse();
        assertThat(cache.evictionCount() - evictions)
                .as("slabs evicted for the copy: one reservation step")
                .isLessThanOrEqualTo(WriteThrough.RESERVE_STEP / (256 * KB));
        assertThat(cache.holdsWholeFile("first")).isTrue();
        assertThat(cache.usedBytes()).isEqualTo(3 * MB);
        cache.checkInvariants();
    }

    @Test
    void aCopyThatJustFits_isKept_althoughTheLastReservationStepWouldNot() throws Exception {
        File dir = new File(tmp, "cache");
        cache = new DiskCache(dir, 4 * MB + 512 * KB, 0);
        cache.liveBytes(4 * MB + 512 * KB);
        WriteThrough copy = cache.writeThrough("f");
        byte[] file = randomBytes(8, (int) (4 * MB + 256 * KB));
        for (int off = 0; off < file.length; off += 64 * KB) {
            copy.write(file, off, 64 * KB);
        }
        assertThat(copy.abandoned()).isFalse();
        assertThat(copy.commit(file.length)).isTrue();
        assertThat(cache.usedBytes()).isEqualTo(file.length);
        cache.checkInvariants();
    }

    /**
     * A cache exactly the size of the files copied into it (a budget of 100% of the state, filled
     * by the warm-up, which knows each file's length) keeps every copy. Found measuring the
     * warm-up: the last copy reserved a whole step past its end, the cache evicted the least
     * recently used copy to make that room, and that file was then read block by block from the
     * primary storage (in about half of the runs, 1,100 more remote reads and 90% of the steady
     * throughput 2-4 s later).
     */
    @Test
    void copiesOfKnownLength_inACacheOfExactlyTheirSize_evictNoOtherCopy() throws Exception {
        int[] sizes = {1536 * KB, 700 * KB, 1234 * KB + 17};
        long total = 0;
        for (int size : sizes) {
            total += size;
        }
        cache = new DiskCache(new File(tmp, "cache"), total, 0);
        cache.liveBytes(total);
        for (int i = 0; i < sizes.length; i++) {
            byte[] file = randomBytes(20 + i, sizes[i]);
            WriteThrough copy = cache.writeThrough("f" + i, file.length);
            assertThat(copy).as("copy %d", i).isNotNull();
            for (int off = 0; off < file.length; off += 64 * KB) {
                copy.write(file, off, Math.min(64 * KB, file.length - off));
            }
            assertThat(copy.commit(file.length)).as("copy %d", i).isTrue();
        }
        assertThat(cache.evictionCount()).isZero();
        assertThat(cache.wholeFileCount()).isEqualTo(sizes.length);
        assertThat(cache.usedBytes()).isEqualTo(total);
        cache.checkInvariants();
    }

    @Test
    void anAbortedCopy_givesItsReservationBack() throws Exception {
        File dir = new File(tmp, "cache");
        cache = new DiskCache(dir, 4 * MB, 0);
        WriteThrough copy = cache.writeThrough("a");
        copy.write(randomBytes(3, 64 * KB), 0, 64 * KB);
        assertThat(cache.usedBytes()).as("the copy's reservation").isPositive();
        copy.abort();
        copy.abort(); // idempotent
        assertThat(cache.usedBytes()).isZero();
        cache.checkInvariants();
    }

    private static byte[] slice(byte[] b, int from, int length) {
        byte[] s = new byte[length];
        System.arraycopy(b, from, s, 0, length);
        return s;
    }

    private static long directoryBytes(File dir) {
        long n = 0;
        File[] files = dir.listFiles((d, name) -> !name.equals(CacheDirectoryLock.LOCK_FILE));
        if (files != null) {
            for (File f : files) {
                n += f.length();
            }
        }
        return n;
    }
}
