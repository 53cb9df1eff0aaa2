package io.github.flinkstate.disagg.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.sst.IoRateLimiter;
import io.github.flinkstate.disagg.engine.testutil.LsmModelRunner;
import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Writes wait while the store holds {@code l0StopWritesTrigger} level-0 files it flushed itself, so
 * that a writer faster than compaction cannot pile up level-0 files (every get and scan reads each
 * of them, and every manifest lists them with their tombstones); a compaction that fails while
 * writes wait fails the write, naming the cause, instead of leaving the writer waiting for ever.
 */
class Level0StallTest {

    private static final int STOP = 4;

    @TempDir File tmp;

    private LsmOptions options(String dir) {
        return new LsmOptions(
                        FileSystem.getLocalFileSystem(),
                        new Path(new File(tmp, dir).toURI()),
                        KeyGroupSpan.of(0, 3))
                .memtableBytes(8 << 10)
                .maxImmutableMemtables(1)
                .l0CompactionTrigger(2)
                .l0StopWritesTrigger(STOP);
    }

    @Test
    void aWriterFasterThanCompaction_waitsInsteadOfPilingUpLevel0Files() throws Exception {
        // compaction I/O past the limiter's burst allowance blocks until the test releases it
        CountDownLatch release = new CountDownLatch(1);
        IoRateLimiter gate =
                new IoRateLimiter(1, System::nanoTime, (limiter, nanos) -> release.await());
        try (LsmStore store = LsmStore.open(options("gated").compactionRateLimiter(gate))) {
            AtomicInteger maxLevel0 = new AtomicInteger();
            AtomicReference<Thread> writerThread = new AtomicReference<>();
            CompletableFuture<Void> writer =
                    CompletableFuture.runAsync(
                            () -> {
                                writerThread.set(Thread.currentThread());
                                try {
                                    for (int i = 0; i < 6_000; i++) {
                                        store.put(LsmModelRunner.key(0, 0, i), new byte[32]);
                                        maxLevel0.accumulateAndGet(
                                                store.filesPerLevel()[0], Math::max);
                                    }
                                } catch (IOException e) {
                                    throw new UncheckedIOException(e);
                                }
                            });
            // the writer runs ahead while compaction is held, until it stalls (waiting on the
            // store's monitor in bounded waits) with the stop trigger's level-0 files
            Waits.until(
                    "the writer stalls at the level-0 stop trigger",
                    Duration.ofSeconds(60),
                    () ->
                            store.filesPerLevel()[0] >= STOP
                                    && writerThread.get() != null
                                    && writerThread.get().getState() == Thread.State.TIMED_WAITING);
            assertThat(maxLevel0.get()).isLessThanOrEqualTo(STOP + 1);
            assertThat(writer).isNotDone();

            release.countDown();
            writer.get(60, TimeUnit.SECONDS);
            assertThat(store.stats().level0Stalls()).isPositive();
            assertThat(store.stats().level0StallNanos()).isPositive();
            assertThat(maxLevel0.get()).isLessThanOrEqualTo(STOP + 1);
            for (int i = 0; i < 6_000; i += 97) {
                assertThat(store.get(LsmModelRunner.key(0, 0, i))).hasSize(32);
            }
            store.checkInvariants();
        }
    }

    @Test
    void aCompactionFailingWhileWritesWait_failsTheWrite() throws IOException {
        // the limiter's first sleep fails: every compaction past the burst allowance fails
        IoRateLimiter failing =
                new IoRateLimiter(
                        1,
                        System::nanoTime,
                        (limiter, nanos) -> {
                            throw new IllegalStateException("injected limiter failure");
                        });
        try (LsmStore store = LsmStore.open(options("failing").compactionRateLimiter(failing))) {
            IOException stalled = null;
            int written = 0;
            for (int i = 0; i < 20_000 && stalled == null; i++) {
                try {
                    store.put(LsmModelRunner.key(0, 0, i), new byte[32]);
                    written++;
                } catch (IOException e) {
                    stalled = e;
                }
            }
            assertThat(stalled)
                    .isNotNull()
                    .hasMessageContaining("level-0 files")
                    .hasMessageContaining("background compaction, which failed")
                    .hasMessageContaining("injected limiter failure");
            assertThat(store.filesPerLevel()[0]).isLessThanOrEqualTo(STOP + 1);
            for (int i = 0; i < written; i += 997) {
                assertThat(store.get(LsmModelRunner.key(0, 0, i))).hasSize(32);
            }
        }
    }

    /**
     * Writes stop at {@code l0StopWritesTrigger} level-0 files and wait for a compaction that
     * starts at {@code l0CompactionTrigger}: a stop below the trigger is refused when the store
     * opens. Found in a review: the writer waited forever for a compaction the picker never chose.
     */
    @Test
    void aStopTriggerBelowTheCompactionTrigger_isRefused() {
        LsmOptions o =
                new LsmOptions(
                                FileSystem.getLocalFileSystem(),
                                new Path(new Path(tmp.toURI()), "refused"),
                                KeyGroupSpan.of(0, 3))
                        .l0CompactionTrigger(8)
                        .l0StopWritesTrigger(4);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> LsmStore.open(o))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("l0StopWritesTrigger (4)")
                .hasMessageContaining("l0CompactionTrigger (8)");
    }
}
