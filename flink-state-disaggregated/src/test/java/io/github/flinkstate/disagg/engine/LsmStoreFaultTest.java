package io.github.flinkstate.disagg.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.disagg.engine.fs.FileDeletionPolicy;
import io.github.flinkstate.disagg.engine.iterator.LsmIterator;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.sst.IoRateLimiter;
import io.github.flinkstate.disagg.engine.testutil.LsmModelRunner;
import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.Hang;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import io.github.flinkstate.testing.fs.Listings;
import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import java.util.regex.Pattern;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fault injection through {@link InjectingFileSystem} (the shared test kit's): corrupted blocks,
 * truncated and missing files must fail reads with an {@link IOException} naming the file and the
 * offset; a failing write must fail the flush (or compaction) without touching the live version.
 */
class LsmStoreFaultTest {

    private static final KeyGroupSpan SPAN = KeyGroupSpan.of(0, 3);

    @TempDir File tmp;

    private final InjectingFileSystem fs = new InjectingFileSystem(FileSystem.getLocalFileSystem());
    private int dirs;

    private LsmOptions options() {
        return new LsmOptions(fs, new Path(new Path(tmp.toURI()), "s" + (dirs++)), SPAN)
                .blockSize(256)
                .memtableBytes(1 << 20)
                .backgroundCompaction(false)
                .blockCache(new BlockCache(1 << 20));
    }

    private static NavigableMap<byte[], byte[]> fill(LsmStore store, int n, int salt)
            throws IOException {
        NavigableMap<byte[], byte[]> model = LsmModelRunner.newModel();
        for (int i = 0; i < n; i++) {
            byte[] k = LsmModelRunner.key(i % 4, 0, i);
            byte[] v = ("value-" + salt + "-" + i).getBytes();
            store.put(k, v);
            model.put(k, v);
        }
        return model;
    }

    private static void assertContent(LsmStore store, NavigableMap<byte[], byte[]> model)
            throws IOException {
        store.checkInvariants();
        for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
            assertThat(store.get(e.getKey())).isEqualTo(e.getValue());
        }
        int n = 0;
        try (LsmIterator it = store.scanAll()) {
            for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
                assertThat(it.isValid()).isTrue();
                assertThat(it.key()).isEqualTo(e.getKey());
                assertThat(it.value()).isEqualTo(e.getValue());
                it.next();
                n++;
            }
            assertThat(it.isValid()).isFalse();
        }
        assertThat(n).isEqualTo(model.size());
    }

    /** A store with one flushed file, closed; returns its retained snapshot. */
    private LsmSnapshot oneFileSnapshot() throws IOException {
        try (LsmStore store = LsmStore.open(options())) {
            fill(store, 400, 0);
            LsmSnapshot snap = store.snapshot();
            assertThat(snap.files()).hasSize(1);
            return snap;
        }
    }

    @Test
    void corruptedBlock_failsWithPathAndOffset() throws Exception {
        LsmSnapshot snap = oneFileSnapshot();
        String file = snap.files().get(0);
        fs.flipByte(file, 10); // inside the first data block, which starts at offset 0
        try (LsmStore store = LsmStore.open(options(), List.of(snap.manifest()))) {
            byte[] firstKey = LsmModelRunner.key(0, 0, 0);
            assertThatThrownBy(() -> store.get(firstKey))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining(file)
                    .hasMessageContaining("offset 0")
                    .hasMessageContaining("CRC32C");
            assertThatThrownBy(
                            () -> {
                                try (LsmIterator it = store.scanAll()) {
                                    while (it.isValid()) {
                                        it.next();
                                    }
                                }
                            })
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining(file)
                    .hasMessageContaining("offset");
            store.checkInvariants();
        }
    }

    @Test
    void corruptedFooter_failsWithPathAndOffset() throws Exception {
        LsmSnapshot snap = oneFileSnapshot();
        String file = snap.files().get(0);
        long size = fs.getFileStatus(new Path(file)).getLen();
        fs.flipByte(file, size - 20); // inside the footer, just before the trailer
        try (LsmStore store = LsmStore.open(options(), List.of(snap.manifest()))) {
            assertThatThrownBy(() -> store.get(LsmModelRunner.key(1, 0, 1)))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining(file)
                    .hasMessageContaining("offset")
                    .hasMessageContaining("footer");
        }
    }

    @Test
    void truncatedFile_failsWithPathAndOffset() throws Exception {
        LsmSnapshot snap = oneFileSnapshot();
        String file = snap.files().get(0);
        long size = fs.getFileStatus(new Path(file)).getLen();
        fs.truncate(file, size - 7);
        try (LsmStore store = LsmStore.open(options(), List.of(snap.manifest()))) {
            assertThatThrownBy(() -> store.get(LsmModelRunner.key(1, 0, 1)))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining(file)
                    .hasMessageContaining("offset " + (size - 17))
                    .hasMessageContaining("Truncated");
        }
    }

    @Test
    void missingFile_failsWithPathAndOffset() throws Exception {
        LsmSnapshot snap = oneFileSnapshot();
        String file = snap.files().get(0);
        fs.hide(file);
        try (LsmStore store = LsmStore.open(options(), List.of(snap.manifest()))) {
            assertThatThrownBy(() -> store.get(LsmModelRunner.key(2, 0, 2)))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining(file)
                    .hasMessageContaining("offset 0")
                    .hasMessageContaining("Missing");
            assertThatThrownBy(store::scanAll)
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining(file);
            store.checkInvariants();
            fs.heal();
            assertThat(store.get(LsmModelRunner.key(2, 0, 2))).isEqualTo("value-0-2".getBytes());
        }
    }

    @Test
    void failingFlush_keepsMemtableReadable_andLaterFlushRetries() throws Exception {
        try (LsmStore store = LsmStore.open(options())) {
            NavigableMap<byte[], byte[]> model = fill(store, 300, 1);
            store.flush();
            List<String> before = store.liveFiles();
            NavigableMap<byte[], byte[]> more = fill(store, 500, 2);
            model.putAll(more);
            store.deletePrefix(LsmModelRunner.key(3, 0, 1)); // namespace-ish prefix "03 00 31"
            model.keySet().removeIf(k -> k[1] == 3 && k[2] == 0 && k[3] == '1');

            fs.failNextWrites(1, 100);
            assertThatThrownBy(store::flush)
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("injected write failure");
            assertThat(store.liveFiles()).isEqualTo(before);
            assertThat(store.stats().flushFailures()).isEqualTo(1);
            assertContent(store, model);
            // the partial file was removed; only live files remain in the directory
            assertThat(listSst(store)).containsExactlyInAnyOrderElementsOf(before);

            store.flush(); // retry succeeds
            assertThat(store.liveFiles()).hasSize(before.size() + 1);
            assertContent(store, model);
            LsmSnapshot snap = store.snapshot();
            try (LsmStore reopened = LsmStore.open(options(), List.of(snap.manifest()))) {
                assertContent(reopened, model);
            }
            snap.release();
        }
    }

    @Test
    void failingCompaction_keepsLiveVersion() throws Exception {
        try (LsmStore store = LsmStore.open(options().l0CompactionTrigger(2))) {
            NavigableMap<byte[], byte[]> model = LsmModelRunner.newModel();
            for (int round = 0; round < 3; round++) {
                model.putAll(fill(store, 200, round));
                store.flush();
            }
            List<String> before = store.liveFiles();
            fs.failNextWrites(1, 100);
            assertThatThrownBy(store::compactOnce).isInstanceOf(IOException.class);
            assertThat(store.liveFiles()).isEqualTo(before);
            assertContent(store, model);
            assertThat(store.compactOnce()).isTrue();
            assertThat(store.liveFiles()).isNotEqualTo(before);
            assertContent(store, model);
        }
    }

    @Test
    void backgroundFlushFailure_stallsWriters_thenRecovers() throws Exception {
        LsmOptions o = options().memtableBytes(4096).maxImmutableMemtables(1);
        try (LsmStore store = LsmStore.open(o)) {
            fs.failNextWrites(Integer.MAX_VALUE, 100);
            NavigableMap<byte[], byte[]> model = LsmModelRunner.newModel();
            IOException stalled = null;
            for (int i = 0; i < 100_000 && stalled == null; i++) {
                byte[] k = LsmModelRunner.key(i % 4, 1, i);
                try {
                    store.put(k, new byte[] {(byte) i});
                    model.put(k, new byte[] {(byte) i});
                } catch (IOException e) {
                    stalled = e;
                }
            }
            assertThat(stalled).isNotNull().hasMessageContaining("flush failed");
            assertContent(store, model);
            fs.heal();
            store.flush();
            assertContent(store, model);
            assertThat(store.liveFiles()).isNotEmpty();
        }
    }

    /**
     * Rehoming a file the store may delete deletes the original outside the lock every read takes:
     * a delete that hangs on the primary storage holds up the rehome only, never a get. Found in a
     * review: the swapped-out file became obsolete inside the version set's lock.
     */
    @Test
    void aHangingDeleteAfterARehome_blocksNoRead() throws Exception {
        try (LsmStore store = LsmStore.open(options())) {
            NavigableMap<byte[], byte[]> model = fill(store, 50, 1);
            store.flush();
            String original = store.liveFiles().get(0);
            try (Hang hang =
                    fs.hang(FsOp.DELETE, ".*" + Pattern.quote(new Path(original).getName()))) {
                CompletableFuture<String> rehome =
                        CompletableFuture.supplyAsync(
                                () -> {
                                    try {
                                        return store.rehome(original);
                                    } catch (IOException e) {
                                        throw new UncheckedIOException(e);
                                    }
                                });
                Waits.until(
                        "the original's delete hangs",
                        Duration.ofSeconds(60),
                        () -> hang.blockedCalls() > 0);
                assertTimeoutPreemptively(
                        Duration.ofSeconds(30), () -> assertContent(store, model));
                hang.release();
                assertThat(rehome.get(1, TimeUnit.MINUTES)).isNotEqualTo(original);
            }
            assertContent(store, model);
        }
    }

    /**
     * A compaction interrupted while it paces its finished output (the rate limiter's wait after
     * the output's last bytes; a cancelled task's thread in {@code compactAll}) leaves no file
     * behind. Found in a review: the finished output was in no list the failure cleaned up.
     */
    @Test
    void aCompactionInterruptedAfterFinishingAnOutput_deletesIt() throws Exception {
        IoRateLimiter interruptedAtFinish =
                new IoRateLimiter(
                        1,
                        System::nanoTime,
                        (limiter, nanos) -> {
                            for (StackTraceElement e : Thread.currentThread().getStackTrace()) {
                                if (e.getClassName().endsWith("CompactionJob")
                                        && e.getMethodName().equals("finish")) {
                                    throw new InterruptedException("cancelled");
                                }
                            }
                        });
        LsmOptions o = options().compactionRateLimiter(interruptedAtFinish);
        try (LsmStore store = LsmStore.open(o)) {
            // 2 x 200 KiB: past the limiter's burst, so the pacing waits, also at the finish
            NavigableMap<byte[], byte[]> model = LsmModelRunner.newModel();
            for (int round = 0; round < 2; round++) {
                for (int i = 0; i < 200; i++) {
                    byte[] k = LsmModelRunner.key(i % 4, 0, i);
                    byte[] v = new byte[1024];
                    Arrays.fill(v, (byte) (round * 7 + i));
                    store.put(k, v);
                    model.put(k, v);
                }
                store.flush();
            }
            List<String> live = store.liveFiles();
            assertThatThrownBy(store::compactAll).isInstanceOf(InterruptedIOException.class);
            Thread.interrupted();
            assertThat(store.liveFiles()).containsExactlyInAnyOrderElementsOf(live);
            assertThat(listSst(store)).containsExactlyInAnyOrderElementsOf(live);
            assertContent(store, model);
        }
    }

    /**
     * A flush that fails with an {@link Error} (here from a compaction filter; an out-of-memory
     * error while building a file is the real-world case) stalls writers with an error, as an
     * {@link IOException} does. Found in a review: only exceptions counted as flush failures, so
     * writers waited for ever while every retry failed the same way.
     */
    @Test
    void aFlushFailingWithAnError_failsTheStalledWriter_insteadOfHanging() throws Exception {
        AtomicBoolean failing = new AtomicBoolean(true);
        LsmOptions o =
                options()
                        .memtableBytes(4096)
                        .maxImmutableMemtables(1)
                        .compactionFilter(
                                () ->
                                        (k, v) -> {
                                            if (failing.get()) {
                                                throw new AssertionError("filter bug");
                                            }
                                            return false;
                                        });
        try (LsmStore store = LsmStore.open(o)) {
            IOException stalled =
                    assertTimeoutPreemptively(
                            Duration.ofMinutes(1),
                            () -> {
                                for (int i = 0; i < 100_000; i++) {
                                    try {
                                        store.put(
                                                LsmModelRunner.key(i % 4, 1, i),
                                                new byte[] {(byte) i});
                                    } catch (IOException e) {
                                        return e;
                                    }
                                }
                                return null;
                            });
            assertThat(stalled).isNotNull().hasMessageContaining("flush failed");
            assertThat(stalled).hasRootCauseMessage("filter bug");
            failing.set(false);
            store.flush();
            assertThat(store.liveFiles()).isNotEmpty();
        }
    }

    /**
     * A flush whose file was written but whose install failed with a runtime exception (here the
     * store's clock, read for the file's birth, breaks once) is a failed flush like a failed write:
     * counted, so that a stalled writer fails instead of waiting while every retry writes another
     * file, and its file, which no version names, deleted. Found in a review.
     */
    @Test
    void aFlushWhoseInstallFails_isCountedAsFailed_andLeavesNoFile() throws Exception {
        AtomicBoolean breakClock = new AtomicBoolean();
        LsmOptions o = options().clock(breakable(breakClock));
        try (LsmStore store = LsmStore.open(o)) {
            NavigableMap<byte[], byte[]> model = fill(store, 500, 1);
            breakClock.set(true);
            assertThatThrownBy(store::flush).hasStackTraceContaining("clock broke");
            assertThat(store.stats().flushFailures()).isEqualTo(1);
            assertThat(store.liveFiles()).isEmpty();
            assertThat(fs.listStatus(o.primaryDir()))
                    .as("the file no version names")
                    .isNullOrEmpty();
            assertContent(store, model); // the memtable still answers
            store.flush(); // the retry installs
            assertThat(store.liveFiles()).hasSize(1);
            assertContent(store, model);
        }
    }

    /**
     * The same for a compaction: its outputs, which no version names because their install failed,
     * are deleted (they stayed on the primary storage, one set per failed attempt). Found in a
     * review.
     */
    @Test
    void aCompactionWhoseInstallFails_leavesNoFile() throws Exception {
        AtomicBoolean breakClock = new AtomicBoolean();
        LsmOptions o = options().l0CompactionTrigger(2).clock(breakable(breakClock));
        try (LsmStore store = LsmStore.open(o)) {
            NavigableMap<byte[], byte[]> model = fill(store, 500, 1);
            store.flush();
            model.putAll(fill(store, 500, 2));
            store.flush();
            List<String> before = store.liveFiles();
            breakClock.set(true);
            assertThatThrownBy(store::compactOnce).hasStackTraceContaining("clock broke");
            assertThat(store.liveFiles()).isEqualTo(before);
            assertThat(fs.listStatus(o.primaryDir()))
                    .as("files in the primary directory: the live ones only")
                    .hasSize(before.size());
            assertContent(store, model);
            assertThat(store.compactOnce()).isTrue(); // the retry installs
            assertContent(store, model);
        }
    }

    /**
     * Closing a store whose background flush hangs on the primary storage returns without waiting
     * for it (a task disposing its backend waited up to a minute for each of the flush and the
     * compaction thread, for work whose result close drops), and a flush queued behind the hung one
     * writes nothing: it used to write the same memtable again after close, only to delete it. Once
     * the hang ends, the hung flush deletes its file. Found in a review.
     */
    @Test
    void closeWhileAFlushHangs_returnsWithoutIt_andTheQueuedFlushWritesNothing() throws Exception {
        LsmOptions o = options().memtableBytes(64 << 10).maxImmutableMemtables(1000);
        LsmStore store = LsmStore.open(o);
        byte[] value = new byte[200];
        long sstCreates;
        try (Hang writes = fs.hang(FsOp.WRITE, ".*\\.sst")) {
            int i = 0;
            while (writes.blockedCalls() == 0) {
                store.put(LsmModelRunner.key(i % 4, 0, i++), value);
            }
            for (int j = 0; j < 400; j++) { // another full memtable: its flush waits in the queue
                store.put(LsmModelRunner.key(j % 4, 1, j), value);
            }
            sstCreates = fs.counters().calls(FsOp.CREATE);
            CompletableFuture<Void> closing = CompletableFuture.runAsync(store::close);
            Waits.until(
                    "close returned while the flush still hangs",
                    Duration.ofSeconds(40),
                    closing::isDone);
            assertThat(writes.blockedCalls()).isEqualTo(1);
        }
        Waits.until(
                "the hung flush deleted its file",
                Duration.ofSeconds(30),
                () -> isEmpty(o.primaryDir()));
        assertThat(fs.counters().calls(FsOp.CREATE))
                .as("files created after close began")
                .isEqualTo(sstCreates);
    }

    /**
     * Files that become obsolete after the store closed (a snapshot released late, on a
     * checkpoint's thread) are deleted on a thread of their own, not on the releasing one, which
     * waited for as long as the file system hung. Found in a review.
     */
    @Test
    void aSnapshotReleasedAfterClose_doesNotWaitForTheDeletes() throws Exception {
        LsmOptions o = options();
        LsmSnapshot pinned;
        List<String> old;
        try (LsmStore store = LsmStore.open(o)) {
            for (int round = 0; round < 3; round++) {
                fill(store, 200, round);
                store.flush();
            }
            old = store.liveFiles();
            pinned = store.pinFiles();
            store.compactAll(); // the pinned files are obsolete, kept for the pin
        }
        try (Hang deletes = fs.hang(FsOp.DELETE, ".*")) {
            CompletableFuture<Void> release = CompletableFuture.runAsync(pinned::release);
            Waits.until(
                    "the release returned while the deletes hang",
                    Duration.ofSeconds(20),
                    release::isDone);
            assertThat(exist(old)).isTrue();
        }
        Waits.until(
                "the obsolete files are deleted", Duration.ofSeconds(30), () -> noneExists(old));
    }

    /**
     * A flush that failed before a writer reached the full backlog is retried; the writer waits for
     * the retry instead of failing on the error it left. Found in a review: the writer failed on
     * the stale error while the retry was on its way to succeed (in Flink: a task failed on a
     * transient error the engine recovered from).
     */
    @Test
    void aFlushThatFailedBeforeAWriterWaited_failsNoWrite_whileItsRetrySucceeds() throws Exception {
        LsmOptions o = options().memtableBytes(4096).maxImmutableMemtables(1);
        try (LsmStore store = LsmStore.open(o)) {
            fs.failNextCreates(1);
            int i = 0;
            // fill the first memtable until it is frozen; its background flush then fails
            while (!store.describe().endsWith("memtables=2")) {
                store.put(LsmModelRunner.key(i % 4, 1, i), new byte[] {(byte) i});
                i++;
            }
            Waits.until(
                    "the first flush failed",
                    Duration.ofSeconds(30),
                    () -> store.stats().flushFailures() == 1);
            int from = i;
            java.util.concurrent.ExecutorService writer =
                    java.util.concurrent.Executors.newSingleThreadExecutor();
            try (Hang retry = fs.hang(FsOp.CREATE, ".*")) {
                java.util.concurrent.Future<?> writes =
                        writer.submit(
                                () -> {
                                    // enough to fill the second memtable and wait for the backlog
                                    for (int j = from; j < from + 500; j++) {
                                        store.put(
                                                LsmModelRunner.key(j % 4, 1, j),
                                                new byte[] {(byte) j});
                                    }
                                    return null;
                                });
                Waits.until(
                        "the retry runs while the writer waits",
                        Duration.ofSeconds(30),
                        () -> retry.blockedCalls() >= 1 || writes.isDone());
                assertThat(writes.isDone())
                        .as("the writer waits for the retry, it did not fail")
                        .isFalse();
                retry.release();
                writes.get(30, java.util.concurrent.TimeUnit.SECONDS);
            } finally {
                writer.shutdownNow();
            }
            assertThat(store.stats().flushFailures()).isEqualTo(1);
            for (int j = 0; j < from + 500; j++) {
                assertThat(store.get(LsmModelRunner.key(j % 4, 1, j)))
                        .isEqualTo(new byte[] {(byte) j});
            }
        }
    }

    @Test
    void obsoleteFiles_deletedOnlyWhenNoSnapshotOrReaderNeedsThem() throws Exception {
        try (LsmStore store = LsmStore.open(options())) {
            NavigableMap<byte[], byte[]> model = LsmModelRunner.newModel();
            for (int round = 0; round < 3; round++) {
                model.putAll(fill(store, 200, round));
                store.flush();
            }
            List<String> old = store.liveFiles();
            LsmSnapshot snap = store.snapshot();
            LsmIterator pinned = store.scanAll();
            store.compactAll();
            assertThat(store.liveFiles()).doesNotContainAnyElementsOf(old);
            assertThat(exist(old)).isTrue();
            snap.release();
            assertThat(exist(old)).isTrue(); // the open iterator still pins them
            int n = 0;
            while (pinned.isValid()) {
                n++;
                pinned.next();
            }
            assertThat(n).isEqualTo(model.size());
            pinned.close(); // the last pin: the deletes go to a background thread
            Waits.until(
                    "the obsolete files are deleted",
                    Duration.ofSeconds(30),
                    () -> noneExists(old));
            assertContent(store, model);
            store.checkInvariants();
        }
    }

    /**
     * A read that releases the last pin of obsolete files (here an iterator's close on the task
     * thread) does not wait for their deletes, which on an object store take tens of milliseconds
     * each and on a hanging one for ever; they run on a background thread. Found in a review: the
     * reader's thread ran them.
     */
    @Test
    void aReadReleasingTheLastPin_doesNotWaitForTheDeletes() throws Exception {
        try (LsmStore store = LsmStore.open(options())) {
            for (int round = 0; round < 3; round++) {
                fill(store, 200, round);
                store.flush();
            }
            List<String> old = store.liveFiles();
            LsmIterator pinned = store.scanAll();
            store.compactAll();
            try (Hang deletes = fs.hang(FsOp.DELETE, ".*")) {
                assertTimeoutPreemptively(Duration.ofSeconds(30), pinned::close);
                Waits.until(
                        "a background thread deletes",
                        Duration.ofSeconds(30),
                        () -> deletes.blockedCalls() > 0);
                deletes.release();
            }
            Waits.until(
                    "the obsolete files are deleted",
                    Duration.ofSeconds(30),
                    () -> noneExists(old));
        }
    }

    @Test
    void deletionPolicy_decidesWhichFilesTheEngineDeletes() throws Exception {
        try (LsmStore store = LsmStore.open(options().deletionPolicy(FileDeletionPolicy.never()))) {
            for (int round = 0; round < 3; round++) {
                fill(store, 100, round);
                store.flush();
            }
            List<String> old = store.liveFiles();
            store.compactAll();
            store.awaitQueuedDeletes();
            assertThat(exist(old)).isTrue();
        }
        // A restored store never deletes the foreign files it read (default policy).
        LsmSnapshot snap = oneFileSnapshot();
        try (LsmStore restored = LsmStore.open(options(), List.of(snap.manifest()))) {
            fill(restored, 100, 9);
            restored.flush();
            restored.compactAll();
            restored.awaitQueuedDeletes();
            assertThat(restored.liveFiles()).doesNotContainAnyElementsOf(snap.files());
            assertThat(exist(snap.files())).isTrue();
        }
    }

    private boolean noneExists(List<String> files) {
        try {
            for (String f : files) {
                if (fs.exists(new Path(f))) {
                    return false;
                }
            }
            return true;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A clock that reads 0 and throws once each time {@code breakOnce} is set. */
    private static LongSupplier breakable(AtomicBoolean breakOnce) {
        return () -> {
            if (breakOnce.getAndSet(false)) {
                throw new IllegalStateException("clock broke");
            }
            return 0;
        };
    }

    private boolean isEmpty(Path dir) {
        try {
            return Listings.names(fs, dir).isEmpty();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private boolean exist(List<String> files) throws IOException {
        for (String f : files) {
            if (!fs.exists(new Path(f))) {
                return false;
            }
        }
        return true;
    }

    private List<String> listSst(LsmStore store) throws IOException {
        List<String> out = new ArrayList<>();
        Path dir = new Path(store.liveFiles().get(0)).getParent();
        for (var s : fs.listStatus(dir)) {
            out.add(s.getPath().toString());
        }
        return out;
    }
}
