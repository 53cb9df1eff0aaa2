package io.github.flinkstate.disagg.engine.sst;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.disagg.engine.testutil.AmongFailingThreads;
import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import io.github.flinkstate.testing.fs.Latency;
import java.io.File;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Opens of a file that fail only because their own thread was interrupted never fail a thread that
 * joined them, however often they repeat (the file-open twin of {@code
 * CachedFileInterruptedLoadsTest}: a waiter used to join again up to three times and then fail with
 * the other thread's interrupt).
 */
class ReaderCacheInterruptedOpensTest {

    private static final int INTERRUPTED_OPENERS = 3;

    @TempDir File tmp;

    private final InjectingFileSystem fs = new InjectingFileSystem(FileSystem.getLocalFileSystem());
    private final ExecutorService pool = Executors.newFixedThreadPool(INTERRUPTED_OPENERS + 1);

    @AfterEach
    void stopPool() throws Exception {
        pool.shutdownNow();
        assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
        fs.heal();
    }

    @Test
    void aReaderAmongOpensThatKeepFailingByInterrupt_alwaysGetsTheFile() throws Exception {
        Path file = SstTestFiles.write(fs, tmp, "a.sst", 500, BlockCompression.NONE);
        long size = fs.getFileStatus(file).getLen();
        String path = file.toString();
        ReaderCache readers = new ReaderCache(fs, new BlockCache(0), 8, 2);
        fs.latency(FsOp.OPEN, Latency.fixed(Duration.ofNanos(200_000)));
        AmongFailingThreads.run( // the healthy reader never fails by another's interrupt
                pool,
                INTERRUPTED_OPENERS,
                () -> {
                    readers.evict(path); // the next get opens the file again
                    Thread.currentThread().interrupt(); // its open fails
                    try {
                        readers.get(path, size);
                    } catch (IOException expected) {
                        // its own interrupt (SstReader names the file)
                    }
                    Thread.interrupted();
                },
                () -> {
                    for (int i = 0; i < 2000; i++) {
                        assertThat(readers.get(path, size).fileSize()).isEqualTo(size);
                    }
                    return null;
                });
        readers.close();
        assertThat(fs.openInputStreams()).as("streams left open").isZero();
    }
}
