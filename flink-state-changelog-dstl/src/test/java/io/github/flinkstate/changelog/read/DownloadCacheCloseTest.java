package io.github.flinkstate.changelog.read;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.changelog.testutils.TestStorages;
import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.Hang;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Closing the download cache while a download is still running (a restore that failed on one file
 * while the others were being prefetched, a job leaving the TaskManager) leaves no local file or
 * directory behind, whether the download ends while {@code close()} waits for it or only after
 * {@code close()} gave up waiting. Before the fix, a download that outlived {@code close()}
 * re-created the deleted directory and wrote its copy there (CI saw it as a temp directory that
 * could not be deleted after {@code ReaderFaultInjectionTest}).
 */
class DownloadCacheCloseTest {

    private static final InjectingFileSystem FS = InjectingFileSystem.shared();

    @TempDir File tmp;

    private final ExecutorService executor = Executors.newSingleThreadExecutor();

    @BeforeEach
    void resetFaults() {
        FS.reset();
    }

    @AfterEach
    void stopExecutor() throws Exception {
        FS.heal();
        executor.shutdownNow();
        assertThat(executor.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    }

    /**
     * A reader waiting for a download that never started (queued behind a busy download thread)
     * fails as soon as the cache closes (the view's close drops queued downloads), not after the
     * stall timeout. Found in a review: it waited the whole timeout, two minutes by default.
     */
    @Test
    void aReaderWaitingForAQueuedDownload_failsWhenTheCacheCloses() throws Exception {
        FileStateHandle file =
                TestStorages.writeOneFile(FS.path(new File(tmp, "dfs")), new File(tmp, "w"), "v");
        List<Runnable> queued = new CopyOnWriteArrayList<>();
        DownloadCache cache =
                new DownloadCache(
                        new File(tmp, "cache"),
                        queued::add, // a download thread that never gets to it
                        Duration.ofMinutes(1),
                        Duration.ZERO,
                        Duration.ofMinutes(10));
        CompletableFuture<Throwable> reader = new CompletableFuture<>();
        Thread t =
                new Thread(
                        () -> {
                            try {
                                cache.pin(file);
                                reader.complete(null);
                            } catch (Throwable e) {
                                reader.complete(e);
                            }
                        });
        t.start();
        Waits.until("the download is queued", Duration.ofSeconds(30), () -> !queued.isEmpty());
        cache.close();
        assertThat(reader.get(30, TimeUnit.SECONDS))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("closed");
        t.join();
    }

    /**
     * The race CI hit: a download task already taken by a pool thread (so {@code shutdownNow} does
     * not remove it) starts only after {@code close()} deleted the directory.
     */
    @Test
    void downloadStartingAfterClose_writesNothing() throws Exception {
        FileStateHandle file =
                TestStorages.writeOneFile(FS.path(new File(tmp, "dfs")), new File(tmp, "w"), "v");
        File directory = new File(tmp, "cache");
        CountDownLatch start = new CountDownLatch(1);
        Executor startsLate =
                task ->
                        executor.execute(
                                () -> {
                                    try {
                                        start.await();
                                    } catch (InterruptedException e) {
                                        Thread.currentThread().interrupt();
                                        return;
                                    }
                                    task.run();
                                });
        DownloadCache cache =
                new DownloadCache(directory, startsLate, Duration.ofMinutes(1), Duration.ZERO);
        cache.prefetch(file);
        cache.close();
        start.countDown();
        executor.shutdown();
        assertThat(executor.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
        assertThat(directory).doesNotExist();
    }

    @Test
    void downloadEndingWhileCloseWaits_leavesNothingBehind() throws Exception {
        closeDuringDownload(FsOp.OPEN, Duration.ofSeconds(30));
    }

    @Test
    void downloadOutlivingClose_cleansUpAfterItself() throws Exception {
        closeDuringDownload(FsOp.READ, Duration.ZERO);
    }

    private void closeDuringDownload(FsOp hangAt, Duration closeWait) throws Exception {
        FileStateHandle file =
                TestStorages.writeOneFile(FS.path(new File(tmp, "dfs")), new File(tmp, "w"), "v");
        File directory = new File(tmp, "cache");
        DownloadCache cache =
                new DownloadCache(directory, executor, Duration.ofMinutes(1), closeWait);
        Thread closer = new Thread(cache::close, "closer");
        try (Hang hang = FS.hang(hangAt, ".*")) {
            cache.prefetch(file);
            Waits.until(
                    "the download to reach the file system",
                    Duration.ofSeconds(30),
                    () -> hang.blockedCalls() == 1);
            closer.start();
            if (!closeWait.isZero()) {
                Waits.until(
                        "close() to wait for the download",
                        Duration.ofSeconds(30),
                        () -> closer.getState() == Thread.State.TIMED_WAITING);
            } else {
                closer.join(30_000);
                assertThat(closer.isAlive()).isFalse();
            }
            hang.release();
            closer.join(30_000);
            assertThat(closer.isAlive()).isFalse();
        }
        executor.shutdown();
        assertThat(executor.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
        assertThat(directory).doesNotExist();
        assertThatThrownBy(() -> cache.pin(file)).hasMessageContaining("closed");
    }
}
