package io.github.flinkstate.disagg.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.sst.IoRateLimiter;
import io.github.flinkstate.disagg.engine.testutil.LsmModelRunner;
import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import io.github.flinkstate.testing.fs.Latency;
import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Writes wait while the store holds {@code l0StopWritesTrigger} level-0 files it flushed itself, so
 * that a writer faster than compaction cannot pile up level-0 files (every get and scan reads each
 * of them, and every manifest lists them with their tombstones); a compaction that fails while
 * writes wait fails the write, naming the cause, instead of leaving the writer waiting for ever;
 * writers woken together from a stall rotate the memtable once between them, so the frozen
 * memtables stay within {@code maxImmutableMemtables}.
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

    /**
     * Puts keys {@code [from, to)} (32-byte values) on another thread, published in {@code thread};
     * {@code afterPut} runs after each put.
     */
    private static CompletableFuture<Void> writeAsync(
            LsmStore store, int from, int to, AtomicReference<Thread> thread, Runnable afterPut) {
        return CompletableFuture.runAsync(
                () -> {
                    thread.set(Thread.currentThread());
                    try {
                        for (int i = from; i < to; i++) {
                            store.put(LsmModelRunner.key(0, 0, i), new byte[32]);
                            afterPut.run();
                        }
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                });
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
                    writeAsync(
                            store,
                            0,
                            6_000,
                            writerThread,
                            () -> maxLevel0.accumulateAndGet(store.filesPerLevel()[0], Math::max));
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

    /**
     * Restored level-0 files do not make writes wait, also after the store copied them into its own
     * directory (the background copy after a NO_CLAIM restore): the copies counted as files the
     * store flushed, so the first write that needed a new memtable waited for a compaction of all
     * of them (on a DFS, for as long as that compaction took). Found in a review.
     */
    @Test
    void restoredLevel0FilesCopiedIntoTheStore_makeNoWriteWait() throws Exception {
        LsmSnapshot snap;
        try (LsmStore source = LsmStore.open(options("many-l0").backgroundCompaction(false))) {
            for (int file = 0; file < STOP + 2; file++) {
                for (int i = 0; i < 50; i++) {
                    source.put(LsmModelRunner.key(0, 0, file * 100 + i), new byte[32]);
                }
                source.flush();
            }
            assertThat(source.filesPerLevel()[0]).isGreaterThanOrEqualTo(STOP);
            snap = source.snapshot();
        }
        // no compaction starts at the open (only a flush schedules one): the copies are swapped
        // in while every restored level-0 file is still there, as after a real restore
        try (LsmStore store = LsmStore.open(options("restored"), List.of(snap.manifest()))) {
            store.rehomeAll(store.liveFiles());
            assertThat(store.filesPerLevel()[0]).isGreaterThanOrEqualTo(STOP);
            // an 8 KiB memtable holds one entry: the second put rotates, where writes check the
            // level-0 files the store flushed itself (none yet)
            for (int i = 10_000; i < 10_003; i++) {
                store.put(LsmModelRunner.key(0, 0, i), new byte[32]);
            }
            store.flush();
            assertThat(store.stats().flushes()).as("memtables flushed").isPositive();
            assertThat(store.stats().level0Stalls()).isZero();
            assertThat(store.get(LsmModelRunner.key(0, 0, 10_002))).hasSize(32);
            assertThat(store.get(LsmModelRunner.key(0, 0, 1))).hasSize(32);
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
     * A compaction that failed before a writer began to wait is retried, and the writer waits for
     * the retry instead of failing on the old error. From a review: the stalled writer failed at
     * once while the retry was running (the error stayed until a compaction succeeded), so one
     * transient DFS error failed the task although the retry would have succeeded.
     */
    @Test
    void aCompactionThatFailedBeforeTheWait_isRetried_andTheWriterWaitsForTheRetry()
            throws Exception {
        // past the limiter's burst allowance, the first sleep fails its compaction; later sleeps
        // (the retries) block until the test releases them
        AtomicInteger sleeps = new AtomicInteger();
        CountDownLatch release = new CountDownLatch(1);
        IoRateLimiter failOnceThenGate =
                new IoRateLimiter(
                        1,
                        System::nanoTime,
                        (limiter, nanos) -> {
                            if (sleeps.incrementAndGet() == 1) {
                                throw new IllegalStateException("injected transient failure");
                            }
                            release.await();
                        });
        int stop = 20; // far above where the burst runs out, so the failure comes first
        try (LsmStore store =
                        LsmStore.open(
                                options("retried")
                                        .l0StopWritesTrigger(stop)
                                        .compactionRateLimiter(failOnceThenGate));
                AutoCloseable released = release::countDown) { // closed first: close never hangs
            // assumes the compaction thread reaches the failing sleep (about the second
            // compaction) before this thread flushes 20 level-0 files; else this put fails
            int i = 0;
            while (sleeps.get() == 0 && i < 200_000) { // until the failing sleep
                store.put(LsmModelRunner.key(0, 0, i++), new byte[32]);
            }
            Waits.until(
                    "the compaction failure is recorded",
                    Duration.ofSeconds(30),
                    () -> store.stats().compactionFailures() == 1);
            assertThat(store.filesPerLevel()[0]).isLessThan(stop);
            int failedAt = i;
            AtomicReference<Thread> writerThread = new AtomicReference<>();
            CompletableFuture<Void> writer =
                    writeAsync(store, failedAt, failedAt + 5_000, writerThread, () -> {});
            Waits.until(
                    "the writer waits at the level-0 stop trigger, or fails",
                    Duration.ofSeconds(60),
                    () ->
                            writer.isDone()
                                    || (store.filesPerLevel()[0] >= stop
                                            && writerThread.get() != null
                                            && writerThread.get().getState()
                                                    == Thread.State.TIMED_WAITING));
            assertThat(writer).as("waits for the retry instead of failing").isNotDone();

            release.countDown();
            writer.get(60, TimeUnit.SECONDS);
            assertThat(store.stats().compactionFailures()).isEqualTo(1);
            for (int k = 0; k < failedAt + 5_000; k += 997) {
                assertThat(store.get(LsmModelRunner.key(0, 0, k))).hasSize(32);
            }
            store.checkInvariants();
        }
    }

    /**
     * Two writers stalled at the level-0 stop trigger, woken together when the compaction ends,
     * rotate the memtable once between them: the second finds the first's new memtable and writes
     * into it. Found in a review: each went on to rotate after its wait, without checking again
     * (its memtable full? the flush backlog?), so the second froze an almost empty memtable and the
     * frozen memtables exceeded {@code maxImmutableMemtables} while flushes were slow.
     */
    @Test
    void writersWokenTogetherFromALevel0Stall_keepTheFlushBacklogBound() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        IoRateLimiter gate =
                new IoRateLimiter(1, System::nanoTime, (limiter, nanos) -> release.await());
        InjectingFileSystem fs = new InjectingFileSystem(FileSystem.getLocalFileSystem());
        LsmOptions o =
                new LsmOptions(fs, new Path(new File(tmp, "two").toURI()), KeyGroupSpan.of(0, 3))
                        .memtableBytes(8 << 10)
                        .maxImmutableMemtables(1)
                        .l0CompactionTrigger(2)
                        .l0StopWritesTrigger(STOP)
                        .compactionRateLimiter(gate);
        try (LsmStore store = LsmStore.open(o);
                AutoCloseable released = release::countDown) { // closed first: close never hangs
            AtomicReference<Thread> a = new AtomicReference<>();
            AtomicReference<Thread> b = new AtomicReference<>();
            CompletableFuture<Void> writerA = writeAsync(store, 0, 3_000, a, () -> {});
            CompletableFuture<Void> writerB = writeAsync(store, 100_000, 103_000, b, () -> {});
            Waits.until(
                    "both writers stall at the level-0 stop trigger",
                    Duration.ofSeconds(60),
                    () ->
                            store.filesPerLevel()[0] >= STOP
                                    && store.immutableMemtableCount() == 0
                                    && waiting(a.get())
                                    && waiting(b.get()));
            // slow flushes from now on, so that a second frozen memtable would stay a while
            fs.latency(FsOp.CREATE, Latency.fixed(Duration.ofMillis(300)));
            AtomicInteger mostFrozen = new AtomicInteger();
            AtomicBoolean sampling = new AtomicBoolean(true);
            Thread sampler =
                    new Thread(
                            () -> {
                                while (sampling.get()) {
                                    mostFrozen.accumulateAndGet(
                                            store.immutableMemtableCount(), Math::max);
                                    LockSupport.parkNanos(200_000);
                                }
                            });
            sampler.start();
            release.countDown();
            Thread.sleep(2_000); // the woken writers rotate, the first flushes are slow
            fs.latency(FsOp.CREATE, Latency.none());
            writerA.get(120, TimeUnit.SECONDS);
            writerB.get(120, TimeUnit.SECONDS);
            sampling.set(false);
            sampler.join();
            assertThat(mostFrozen.get())
                    .as("frozen memtables at any moment (maxImmutableMemtables = 1)")
                    .isLessThanOrEqualTo(1);
            for (int k = 0; k < 3_000; k += 97) {
                assertThat(store.get(LsmModelRunner.key(0, 0, k))).hasSize(32);
                assertThat(store.get(LsmModelRunner.key(0, 0, 100_000 + k))).hasSize(32);
            }
            store.checkInvariants();
        }
    }

    private static boolean waiting(Thread t) {
        return t != null && t.getState() == Thread.State.TIMED_WAITING;
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
