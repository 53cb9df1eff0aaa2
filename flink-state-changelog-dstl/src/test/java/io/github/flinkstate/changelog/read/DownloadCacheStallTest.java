package io.github.flinkstate.changelog.read;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.changelog.DfsChangelogOptions;
import io.github.flinkstate.changelog.testutils.TestStorages;
import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A download that stalls is abandoned after the stall timeout even when its stream behaves like
 * HDFS's (read and close synchronized on the stream, so a close waits for a blocked read; a read
 * that ignores interrupts): the waiting reader fails at once, naming the file and the option. When
 * the stalled read finally returns, the abandoned download leaves no copy behind, and the next read
 * downloads the file again. A version that closed the stream on the waiting reader's thread hung
 * here (the close waited for the stalled read); the timeout runs the test on a thread of its own so
 * that such a hang fails it instead of the build.
 */
class DownloadCacheStallTest {

    @TempDir File tmp;

    private final ExecutorService executor = Executors.newFixedThreadPool(2);

    @AfterEach
    void stopExecutor() throws Exception {
        executor.shutdownNow();
        assertThat(executor.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aStalledDownloadThatEndsLate_isAbandoned_andDeletesItsCopy() throws Exception {
        FileStateHandle written =
                TestStorages.writeOneFile(
                        new Path(new File(tmp, "dfs").toURI()), new File(tmp, "w"), "a change");
        CountDownLatch stalled = new CountDownLatch(1);
        CountDownLatch reading = new CountDownLatch(1);
        AtomicInteger opens = new AtomicInteger();
        FileStateHandle hanging = StallingStream.onFirstOpen(written, reading, stalled, opens);
        File directory = new File(tmp, "cache");
        DownloadCache cache =
                new DownloadCache(
                        directory,
                        executor,
                        Duration.ofMinutes(1),
                        Duration.ofSeconds(30),
                        Duration.ofSeconds(2)); // the re-download too: generous on a slow machine
        try {
            cache.prefetch(hanging);
            assertThat(reading.await(30, TimeUnit.SECONDS)).as("the download reads").isTrue();
            assertThatThrownBy(() -> cache.pin(hanging))
                    .hasMessageContaining(written.getFilePath().toString())
                    .hasMessageContaining(DfsChangelogOptions.DOWNLOAD_STALL_TIMEOUT.key());
            assertThat(cache.size()).as("the abandoned download is forgotten").isZero();

            stalled.countDown(); // the stalled read returns, and the download ends with a copy
            Waits.until(
                    "the abandoned download deletes its copy",
                    Duration.ofSeconds(30),
                    () -> copies(directory) == 0);

            File copy = cache.pin(hanging); // downloads again
            assertThat(copy).isFile();
            assertThat(opens).hasValue(2);
            cache.unpin(hanging, copy);
        } finally {
            cache.close();
        }
    }

    private static int copies(File directory) {
        File[] files = directory.listFiles((dir, name) -> name.startsWith("dstl-"));
        return files == null ? 0 : files.length;
    }
}
