package io.github.flinkstate.disagg.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.testutil.LsmModelRunner;
import io.github.flinkstate.testing.fs.Listings;
import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.local.LocalFileSystem;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A copy of an inherited file that {@link LsmStore#rehomeAll} gives up (its caller was interrupted)
 * while the copy is stuck in the file system, ignoring its interrupt for longer than the call waits
 * for it, deletes its target when it ends. Before, the call deleted the targets before that copy
 * created its file, and the copy then completed it: a file in the primary directory that no version
 * and no checkpoint names, left for good. Found in a review.
 */
@Timeout(120)
class RehomeAbandonedCopyTest {

    @TempDir File tmp;

    /** The local file system, whose creates under {@link #stuckUnder} wait for {@link #gate}. */
    private static final class StuckCreates extends LocalFileSystem {
        final CountDownLatch gate = new CountDownLatch(1);
        final AtomicInteger waiting = new AtomicInteger();
        final AtomicInteger createdAfterWait = new AtomicInteger();
        volatile String stuckUnder;

        @Override
        public FSDataOutputStream create(Path f, WriteMode overwrite) throws IOException {
            String under = stuckUnder;
            if (under != null && f.toUri().getPath().startsWith(under)) {
                waiting.incrementAndGet();
                boolean interrupted = false;
                while (gate.getCount() > 0) { // ignores interrupts, as a stuck native call does
                    try {
                        gate.await();
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
                FSDataOutputStream out = super.create(f, overwrite);
                createdAfterWait.incrementAndGet();
                return out;
            }
            return super.create(f, overwrite);
        }
    }

    @Test
    void aCopyGivenUpWhileStuckInTheFileSystem_deletesItsTargetWhenItEnds() throws Exception {
        KeyGroupSpan span = KeyGroupSpan.of(0, 7);
        LsmSnapshot snap;
        try (LsmStore source =
                LsmStore.open(
                        new LsmOptions(
                                        FileSystem.getLocalFileSystem(),
                                        new Path(new Path(tmp.toURI()), "src"),
                                        span)
                                .backgroundCompaction(false))) {
            for (int i = 0; i < 200; i++) {
                source.put(LsmModelRunner.key(i % 8, 0, i), ("v" + i).getBytes());
            }
            source.flush();
            snap = source.snapshot();
        }
        StuckCreates fs = new StuckCreates();
        Path dst = new Path(new Path(tmp.toURI()), "dst");
        try (LsmStore store =
                LsmStore.open(
                        new LsmOptions(fs, dst, span).backgroundCompaction(false).copyThreads(1),
                        List.of(snap.manifest()))) {
            fs.stuckUnder = dst.toUri().getPath();
            AtomicReference<Throwable> error = new AtomicReference<>();
            Thread caller =
                    new Thread(
                            () -> {
                                try {
                                    store.rehomeAll(store.liveFiles());
                                } catch (Throwable t) {
                                    error.set(t);
                                }
                            },
                            "rehome");
            caller.start();
            Waits.until(
                    "the copy is stuck creating its target",
                    Duration.ofSeconds(30),
                    () -> fs.waiting.get() == 1);
            caller.interrupt(); // a cancelled checkpoint: the call gives its copies up
            caller.join(60_000); // after waiting its bounded time for the stuck copy
            assertThat(caller.isAlive()).isFalse();
            assertThat(error.get()).isInstanceOf(InterruptedIOException.class);

            fs.gate.countDown(); // the file system returns: the copy creates and writes its target
            // the copy's file was created (not merely not created yet) and is gone again
            Waits.until(
                    "no copy left in the primary directory",
                    Duration.ofSeconds(30),
                    () -> fs.createdAfterWait.get() == 1 && sstFiles(fs, dst) == 0);
            assertThat(store.liveFiles()).isEqualTo(snap.files());
        } finally {
            snap.release();
        }
    }

    private static int sstFiles(FileSystem fs, Path dir) {
        try {
            return Listings.count(fs, dir, ".sst");
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
