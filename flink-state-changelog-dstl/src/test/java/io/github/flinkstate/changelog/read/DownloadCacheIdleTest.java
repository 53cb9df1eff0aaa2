package io.github.flinkstate.changelog.read;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.changelog.testutils.TestStorages;
import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.Hang;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A prefetched copy is idle from the end of its download, not from the prefetch: a download that
 * took longer than the idle timeout (a slow DFS, or a long replay of an earlier handle before this
 * one is read) used to be swept as soon as it ended, and the reader then downloaded the file again.
 * Found in a review.
 */
@Timeout(60)
class DownloadCacheIdleTest {

    private static final InjectingFileSystem FS = InjectingFileSystem.shared();

    @TempDir File tmp;

    private final ExecutorService executor = Executors.newSingleThreadExecutor();

    @BeforeEach
    void resetFaults() {
        FS.reset();
    }

    @AfterEach
    void stopExecutor() throws Exception {
        FS.reset();
        executor.shutdownNow();
        assertThat(executor.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void aCopyWhoseDownloadOutlastedTheIdleTimeout_isNotSweptWhenItEnds() throws Exception {
        FileStateHandle file =
                TestStorages.writeOneFile(FS.path(new File(tmp, "dfs")), new File(tmp, "w"), "a");
        String remote = InjectingFileSystem.key(file.getFilePath());
        DownloadCache cache =
                new DownloadCache(
                        new File(tmp, "cache"),
                        executor,
                        Duration.ofSeconds(4),
                        Duration.ofSeconds(30));
        try {
            FS.counters().reset();
            Hang slow = FS.hangNext(FsOp.OPEN, Pattern.quote(remote));
            cache.prefetch(file);
            Waits.until(
                    "the download started", Duration.ofSeconds(30), () -> slow.blockedCalls() == 1);
            Thread.sleep(5_000); // the download takes longer than the idle timeout
            slow.release();
            Waits.until("the copy is there", Duration.ofSeconds(30), () -> cache.hasCopy(file));

            cache.sweepIdle();
            assertThat(cache.hasCopy(file)).as("the copy, just downloaded, was swept").isTrue();
            File copy = cache.pin(file);
            cache.unpin(file, copy);
            assertThat(FS.counters().callsUnder(FsOp.OPEN, remote))
                    .as("downloads of the file")
                    .isEqualTo(1);
        } finally {
            cache.close();
        }
    }
}
