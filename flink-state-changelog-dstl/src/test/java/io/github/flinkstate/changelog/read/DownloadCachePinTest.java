package io.github.flinkstate.changelog.read;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.changelog.testutils.TestStorages;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import java.io.File;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Pins count per local copy: a reader that pinned a copy which was evicted and downloaded again
 * meanwhile releases its pin on the old copy, not on the new one. Found in a review: pins were
 * released by file path, so the old copy's reader took the new copy's pin away (it could expire and
 * be deleted under the reader that pinned it), and the new copy's count went below zero once both
 * had released (it never expired, staying on the local disk until the job left).
 */
class DownloadCachePinTest {

    private static final InjectingFileSystem FS = InjectingFileSystem.shared();

    @TempDir File tmp;

    private final ExecutorService executor = Executors.newSingleThreadExecutor();

    @BeforeEach
    void resetFaults() {
        FS.reset();
    }

    @AfterEach
    void stopExecutor() throws Exception {
        executor.shutdownNow();
        assertThat(executor.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void aPinOnAnEvictedCopy_isReleasedOnThatCopy_notOnItsReplacement() throws Exception {
        FileStateHandle file =
                TestStorages.writeOneFile(
                        FS.path(new File(tmp, "dfs-a")), new File(tmp, "w-a"), "a");
        FileStateHandle other =
                TestStorages.writeOneFile(
                        FS.path(new File(tmp, "dfs-b")), new File(tmp, "w-b"), "b");
        // idle entries expire at the next use of the cache
        DownloadCache cache =
                new DownloadCache(
                        new File(tmp, "cache"), executor, Duration.ZERO, Duration.ofSeconds(30));
        try {
            File first = cache.pin(file); // reader B
            assertThat(first.delete()).isTrue(); // the local copy vanishes behind our back
            File second = cache.pin(file); // reader A: evicts it and downloads the file again
            assertThat(second).isFile().isNotEqualTo(first);

            cache.unpin(file, first); // B is done with the first copy
            cache.prefetch(other); // expires idle copies
            assertThat(second).as("A still pins the second copy").isFile();

            cache.unpin(file, second); // A is done
            cache.prefetch(other);
            assertThat(second).as("expired once nobody pins it").doesNotExist();
        } finally {
            cache.close();
        }
    }
}
