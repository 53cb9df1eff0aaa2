package io.github.flinkstate.disagg.engine.sst;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.Hang;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A closed reader cache keeps nothing open: a file whose open was still on its way when the store
 * closed (a background warm-up on a slow primary) has its streams closed as soon as the open
 * returns, and the reader handed out still answers reads through short-lived streams.
 */
class ReaderCacheCloseTest {

    @TempDir File tmp;

    private final InjectingFileSystem fs = new InjectingFileSystem(FileSystem.getLocalFileSystem());

    @AfterEach
    void heal() {
        fs.heal();
    }

    @Test
    void anOpenThatReturnsAfterClose_keepsNoStreamOpen() throws Exception {
        Path file = SstTestFiles.write(fs, tmp, "a.sst", 500, BlockCompression.NONE);
        long size = fs.getFileStatus(file).getLen();
        ReaderCache readers = new ReaderCache(fs, new BlockCache(0), 8, 2);
        CompletableFuture<SstReader> opened;
        try (Hang open = fs.hang(FsOp.OPEN, ".*")) {
            opened =
                    CompletableFuture.supplyAsync(
                            () -> {
                                try {
                                    return readers.get(file.toString(), size);
                                } catch (Exception e) {
                                    throw new RuntimeException(e);
                                }
                            });
            Waits.until(
                    "the open is on its way",
                    Duration.ofSeconds(20),
                    () -> open.blockedCalls() > 0);
            readers.close();
        }
        SstReader r = opened.get(30, TimeUnit.SECONDS);
        assertThat(fs.openInputStreams()).as("streams left open").isZero();
        assertThat(readers.size()).isZero();
        assertThat(r.get(SstTestFiles.key(7)).value()).isEqualTo(SstTestFiles.value(7));
        assertThat(fs.openInputStreams()).as("after a read of the returned reader").isZero();
    }
}
