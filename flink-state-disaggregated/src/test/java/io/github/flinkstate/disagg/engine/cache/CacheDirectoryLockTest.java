package io.github.flinkstate.disagg.engine.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A live cache's directory survives the abandoned-directory sweeps of this process and of another
 * one (a second TaskManager on the same disk). Found in a review: a sweep in the cache's own
 * process probed the lock file with a channel of its own and closed it, and on Linux closing any
 * channel of a file drops all of the process's locks on it (POSIX record locks), so the next sweep
 * of another process found the directory unlocked and deleted it under the live cache.
 */
@Timeout(120)
class CacheDirectoryLockTest {

    @TempDir File tmp;

    @Test
    void aLiveDirectory_survivesASweepHere_andThenOneInAnotherProcess() throws Exception {
        File root = new File(tmp, "root");
        DiskCache live = new DiskCache(new File(root, "live"), 4 << 20, 0);
        try {
            assertThat(sweepInAnotherProcess(root)).as("before").isZero();
            assertThat(DiskCache.deleteAbandonedDirectories(root)).as("here").isZero();
            assertThat(sweepInAnotherProcess(root)).as("after a sweep here").isZero();
            assertThat(new File(root, "live")).exists();
        } finally {
            live.close();
        }
    }

    /**
     * A directory this process already holds is refused with a clear error, and the refusal does
     * not take away the holder's protection from sweeps. (A review found that a directory was
     * registered as held only after its lock was taken: a sweep of another backend building at the
     * same moment could probe it in between, which failed the build with an {@code
     * OverlappingFileLockException} or dropped the new cache's lock; it is now registered first.)
     */
    @Test
    void aDirectoryHeldHere_isRefusedWithAClearError_andStaysProtected() throws Exception {
        File root = new File(tmp, "root");
        File dir = new File(root, "held");
        DiskCache live = new DiskCache(dir, 4 << 20, 0);
        try {
            byte[] block = {1, 2, 3, 4};
            live.offer("f", 0, block);
            assertThatThrownBy(() -> CacheDirectoryLock.acquire(dir))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("in use");
            assertThatThrownBy(() -> new DiskCache(dir, 4 << 20, 0))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("in use");
            assertThat(new File(dir, CacheDirectoryLock.LOCK_FILE))
                    .as("the refused cache wiped nothing (it used to empty the directory first)")
                    .exists();
            assertThat(dir.list()).hasSizeGreaterThan(1); // the live cache's slab too
            assertThat(live.read("f", 0, block.length)).isEqualTo(block);
            assertThat(DiskCache.deleteAbandonedDirectories(root)).as("swept here").isZero();
            assertThat(sweepInAnotherProcess(root)).as("swept elsewhere").isZero();
            assertThat(dir).exists();
        } finally {
            live.close();
        }
    }

    private static int sweepInAnotherProcess(File root) throws Exception {
        String java = new File(System.getProperty("java.home"), "bin/java").getPath();
        Process p =
                new ProcessBuilder(
                                List.of(
                                        java,
                                        "-cp",
                                        System.getProperty("java.class.path"),
                                        AbandonedDirectoryProbe.class.getName(),
                                        root.getPath()))
                        .redirectErrorStream(true)
                        .start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("the other process ended").isTrue();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as(out).isZero();
        for (String line : out.split("\n")) {
            if (line.startsWith("deleted=")) {
                return Integer.parseInt(line.substring("deleted=".length()).trim());
            }
        }
        throw new AssertionError("no result from the other process: " + out);
    }
}
