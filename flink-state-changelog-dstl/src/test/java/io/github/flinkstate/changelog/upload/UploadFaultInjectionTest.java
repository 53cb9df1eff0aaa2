package io.github.flinkstate.changelog.upload;

import static io.github.flinkstate.changelog.testutils.Changes.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.changelog.DfsBatchedChangelogStorage;
import io.github.flinkstate.changelog.DfsChangelogOptions;
import io.github.flinkstate.changelog.testutils.Changes;
import io.github.flinkstate.changelog.testutils.TestStorages;
import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.Hang;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.changelog.ChangelogStateHandleStreamImpl;
import org.apache.flink.runtime.state.changelog.SequenceNumber;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Uploads against the shared kit's {@link InjectingFileSystem} ({@code inject://}): hedging of slow
 * attempts (the winner is kept, the losers' files deleted), retries of failing attempts, a final
 * failure that fails only the checkpoint, back-pressure when the in-flight bound is reached, hung
 * uploads given up at the deadline, a storage close that does not wait for them, and the files of a
 * failed task or an aborted checkpoint. No timing assertions: slow attempts block on injected
 * hangs.
 */
class UploadFaultInjectionTest {

    private static final InjectingFileSystem FS = InjectingFileSystem.shared();

    private static final KeyGroupRange RANGE = KeyGroupRange.of(0, 3);

    /** The DSTL files of any storage (URI paths). */
    private static final String DSTL_FILES = ".*/dstl/dstl-[^/]*";

    private static final Duration WAIT = Duration.ofMinutes(1);

    @TempDir File tmp;

    private DfsBatchedChangelogStorage storage;

    @BeforeEach
    void resetFaults() {
        FS.reset();
    }

    @AfterEach
    void close() throws Exception {
        FS.reset();
        if (storage != null) {
            storage.getRegistry().checkInvariants();
            TestStorages.closeAndAwait(storage);
        }
    }

    /**
     * Hedging only after {@code upload.timeout}: adaptive hedging (the default) would start extra
     * attempts after 50-250 ms, into the hangs the tests wait on and into their exact attempt and
     * file counts. The tests of adaptive hedging turn it back on.
     */
    private Configuration config() {
        Configuration config = TestStorages.config(FS.path(new File(tmp, "dfs")));
        config.set(DfsChangelogOptions.RETRY_DELAY, Duration.ofMillis(1));
        config.set(DfsChangelogOptions.UPLOAD_HEDGE_ADAPTIVE, false);
        return config;
    }

    /** {@link #config()} with adaptive hedging on, and no hedge before the hour-long timeout. */
    private Configuration adaptiveHedgingOnly() {
        Configuration config = config();
        config.set(DfsChangelogOptions.UPLOAD_HEDGE_ADAPTIVE, true);
        config.set(DfsChangelogOptions.UPLOAD_TIMEOUT, Duration.ofHours(1));
        return config;
    }

    private DfsChangelogWriter open(Configuration config) throws Exception {
        storage = TestStorages.storage(config, new File(tmp, "local"));
        return storage.createWriter("op", RANGE, null);
    }

    private static long inFlight(DfsBatchedChangelogStorage storage) {
        return ((InFlightLimiter) storage.getAvailabilityProvider()).inFlightBytes();
    }

    private static String fileName(ChangelogStateHandleStreamImpl handle) {
        return ((FileStateHandle) handle.getHandlesAndOffsets().get(0).f0).getFilePath().getName();
    }

    @Test
    void slowUpload_isHedged_winnerKept_loserFileDeleted() throws Exception {
        Configuration config = config();
        config.set(DfsChangelogOptions.UPLOAD_TIMEOUT, Duration.ofMillis(20));
        DfsChangelogWriter writer = open(config);
        ChangelogStateHandleStreamImpl handle;
        try (Hang slow = FS.hang(FsOp.CREATE, DSTL_FILES)) {
            writer.append(1, bytes("hedged"));
            CompletableFuture<SnapshotResult<ChangelogStateHandleStreamImpl>> persist =
                    writer.persist(SequenceNumber.of(0), 1);
            Waits.until("the first attempt and a hedge wait", WAIT, () -> slow.blockedCalls() >= 2);
            assertThat(storage.getMetrics().hedgedAttempts()).isPositive();
            slow.release(); // every attempt now writes its file; the first to finish wins
            handle = persist.get(1, TimeUnit.MINUTES).getJobManagerOwnedSnapshot();
        }
        assertThat(Changes.read(storage.createReader(), handle)).containsExactly("1:hedged");
        String winner = fileName(handle);
        assertThat(storage.getRegistry().isTracked(handle.getHandlesAndOffsets().get(0).f0))
                .isTrue();
        // every attempt ends (a hedge started just before the winner finished ends without
        // writing, so started attempts and file creations need not match): wait for the attempts
        // themselves, then only the winner's file is left
        storage.getRegistry().checkInvariants();
        TestStorages.closeAndAwait(storage);
        assertThat(TestStorages.files(storage)).containsExactly(winner);
    }

    @Test
    void uploadStuckInTheTail_isHedgedLongBeforeTheTimeout() throws Exception {
        // only adaptive hedging can rescue the stuck upload within the test's wait
        Configuration config = adaptiveHedgingOnly();
        // long enough that no normal write of the warm-up is hedged on a loaded machine
        config.set(DfsChangelogOptions.UPLOAD_HEDGE_MIN_DELAY, Duration.ofSeconds(1));
        DfsChangelogWriter writer = open(config);
        long sqn = 0;
        for (int checkpoint = 1; checkpoint <= HedgeDelay.MIN_COMPARABLE; checkpoint++) {
            writer.append(1, bytes("normal-" + checkpoint));
            writer.persist(SequenceNumber.of(sqn), checkpoint).get(1, TimeUnit.MINUTES);
            sqn = checkpoint;
        }
        assertThat(storage.getMetrics().hedgedAttempts()).isZero();
        ChangelogStateHandleStreamImpl handle;
        try (Hang stuck = FS.hangNext(FsOp.CREATE, DSTL_FILES)) {
            writer.append(1, bytes("tail"));
            handle =
                    writer.persist(SequenceNumber.of(sqn), 100)
                            .get(1, TimeUnit.MINUTES)
                            .getJobManagerOwnedSnapshot();
            assertThat(stuck.totalBlockedCalls()).as("the stuck attempt lost").isEqualTo(1);
        }
        assertThat(storage.getMetrics().hedgedAttempts()).isEqualTo(1);
        assertThat(Changes.read(storage.createReader(), handle)).containsExactly("1:tail");
        String winner = fileName(handle);
        TestStorages.closeAndAwait(storage); // every attempt ended, the stuck one too
        assertThat(TestStorages.files(storage))
                .as("only the winner's file remains of the hedged upload")
                .contains(winner)
                .hasSize(HedgeDelay.MIN_COMPARABLE + 1);
    }

    @Test
    void uploadStuckDuringWarmUp_isHedgedLongBeforeTheTimeout() throws Exception {
        // only the warm-up delay, learnt from one earlier upload, can rescue the stuck upload
        Configuration config = adaptiveHedgingOnly();
        config.set(DfsChangelogOptions.UPLOAD_HEDGE_MIN_DELAY, Duration.ofSeconds(1));
        DfsChangelogWriter writer = open(config);
        writer.append(1, bytes("normal"));
        writer.persist(SequenceNumber.of(0), 1).get(1, TimeUnit.MINUTES);
        assertThat(storage.getMetrics().hedgedAttempts()).isZero();
        ChangelogStateHandleStreamImpl handle;
        try (Hang stuck = FS.hangNext(FsOp.CREATE, DSTL_FILES)) {
            writer.append(1, bytes("tail"));
            handle =
                    writer.persist(SequenceNumber.of(1), 2)
                            .get(1, TimeUnit.MINUTES)
                            .getJobManagerOwnedSnapshot();
            assertThat(stuck.totalBlockedCalls()).as("the stuck attempt lost").isEqualTo(1);
        }
        assertThat(storage.getMetrics().hedgedAttempts()).isEqualTo(1);
        assertThat(Changes.read(storage.createReader(), handle)).containsExactly("1:tail");
        String winner = fileName(handle);
        TestStorages.closeAndAwait(storage); // every attempt ended, the stuck one too
        assertThat(TestStorages.files(storage))
                .as("only the two winners' files remain")
                .contains(winner)
                .hasSize(2);
    }

    @Test
    void firstUploadStuck_isHedgedAfterTheInitialDelay() throws Exception {
        Configuration config = adaptiveHedgingOnly();
        config.set(DfsChangelogOptions.UPLOAD_HEDGE_INITIAL_DELAY, Duration.ofMillis(100));
        DfsChangelogWriter writer = open(config);
        ChangelogStateHandleStreamImpl handle;
        try (Hang stuck = FS.hangNext(FsOp.CREATE, DSTL_FILES)) {
            writer.append(1, bytes("first"));
            handle =
                    writer.persist(SequenceNumber.of(0), 1)
                            .get(1, TimeUnit.MINUTES)
                            .getJobManagerOwnedSnapshot();
            assertThat(stuck.totalBlockedCalls()).as("the stuck attempt lost").isEqualTo(1);
        }
        // one hedge at the initial delay; a second one if that hedge itself was slow (a loaded
        // machine), which changes nothing below
        assertThat(storage.getMetrics().hedgedAttempts()).isBetween(1L, 2L);
        assertThat(Changes.read(storage.createReader(), handle)).containsExactly("1:first");
        String winner = fileName(handle);
        TestStorages.closeAndAwait(storage); // every attempt ended, the stuck one too
        assertThat(TestStorages.files(storage))
                .as("the winner's file only")
                .containsExactly(winner);
    }

    /**
     * A losing attempt stuck on the file system is interrupted when a hedge wins. Before, only
     * giving the upload up interrupted attempts, and a won upload is never given up: the loser kept
     * its upload thread for as long as the file system kept the call (for good on a write that
     * never returns), and each such event took one more of the few upload threads. Found in a
     * review.
     */
    @Test
    void aLosingAttemptStuckOnTheFileSystem_isInterruptedWhenAHedgeWins() throws Exception {
        Configuration config = adaptiveHedgingOnly();
        config.set(DfsChangelogOptions.UPLOAD_HEDGE_INITIAL_DELAY, Duration.ofMillis(100));
        DfsChangelogWriter writer = open(config);
        Hang stuck = FS.hangNext(FsOp.CREATE, DSTL_FILES); // not released by the test
        writer.append(1, bytes("first"));
        ChangelogStateHandleStreamImpl handle =
                writer.persist(SequenceNumber.of(0), 1)
                        .get(1, TimeUnit.MINUTES)
                        .getJobManagerOwnedSnapshot();
        assertThat(stuck.totalBlockedCalls()).as("the stuck attempt lost").isEqualTo(1);
        Waits.until(
                "the losing attempt was interrupted",
                Duration.ofSeconds(20),
                () -> stuck.blockedCalls() == 0);
        String winner = fileName(handle);
        assertThat(Changes.read(storage.createReader(), handle)).containsExactly("1:first");
        TestStorages.closeAndAwait(storage); // every attempt ended
        assertThat(TestStorages.files(storage))
                .as("the winner's file only")
                .containsExactly(winner);
        assertThat(storage.getMetrics().attemptFailures())
                .as("an attempt stopped because another won is no failure")
                .isZero();
    }

    /**
     * While the file system is down, a failed pre-emptive batch put its bytes back above the
     * threshold and the next round started at once: rounds, attempts and warnings without end, with
     * no new change written (found in a review). Now rounds pause after a failure; the checkpoint's
     * own upload is not held back.
     */
    @Test
    void preemptiveUploadsFailing_pauseInsteadOfRetryingInALoop() throws Exception {
        Configuration config = config();
        config.set(DfsChangelogOptions.PREEMPTIVE_PERSIST_THRESHOLD, MemorySize.parse("10b"));
        config.set(DfsChangelogOptions.PERSIST_DELAY, Duration.ZERO);
        DfsChangelogWriter writer = open(config);
        FS.failNextCreates(Integer.MAX_VALUE);
        writer.append(1, bytes("above-the-pre-emptive-threshold"));
        Waits.until(
                "the first pre-emptive round failed",
                WAIT,
                () -> storage.getMetrics().attemptFailures() >= 3);
        Thread.sleep(2_000); // no new change: nothing should start another round meanwhile
        assertThat(storage.getPreemptiveUploads().rounds())
                .as("pre-emptive rounds while the file system is down")
                .isLessThanOrEqualTo(2);

        FS.heal();
        ChangelogStateHandleStreamImpl handle =
                writer.persist(SequenceNumber.of(0), 1)
                        .get(1, TimeUnit.MINUTES)
                        .getJobManagerOwnedSnapshot();
        assertThat(Changes.read(storage.createReader(), handle))
                .containsExactly("1:above-the-pre-emptive-threshold");
    }

    @Test
    void failingAttempts_areRetried() throws Exception {
        DfsChangelogWriter writer = open(config());
        FS.failNextCreates(2);
        writer.append(1, bytes("retried"));
        ChangelogStateHandleStreamImpl handle =
                writer.persist(SequenceNumber.of(0), 1).get().getJobManagerOwnedSnapshot();
        assertThat(storage.getMetrics().attempts()).isEqualTo(3);
        assertThat(storage.getMetrics().attemptFailures()).isEqualTo(2);
        assertThat(Changes.read(storage.createReader(), handle)).containsExactly("1:retried");
        assertThat(TestStorages.files(storage)).hasSize(1);
    }

    @Test
    void exhaustedAttempts_failThePersist_thenTheNextPersistSucceeds() throws Exception {
        Configuration config = config();
        config.set(DfsChangelogOptions.MAX_ATTEMPTS, 2);
        DfsChangelogWriter writer = open(config);
        FS.failNextCreates(2);
        writer.append(1, bytes("a"));

        CompletableFuture<SnapshotResult<ChangelogStateHandleStreamImpl>> failed =
                writer.persist(SequenceNumber.of(0), 1);
        assertThatThrownBy(failed::get)
                .isInstanceOf(ExecutionException.class)
                .hasStackTraceContaining("injected failure")
                // the failure the checkpoint reports says how many attempts failed, to which files
                .hasMessageContaining("after 2 attempt(s)")
                .hasMessageContaining(storage.getDirectory().toString() + "/dstl-");
        assertThat(storage.getMetrics().uploadFailures()).isEqualTo(1);
        writer.checkInvariants();

        writer.append(2, bytes("b"));
        ChangelogStateHandleStreamImpl handle =
                writer.persist(SequenceNumber.of(0), 2).get().getJobManagerOwnedSnapshot();
        assertThat(Changes.read(storage.createReader(), handle)).containsExactly("1:a", "2:b");
        assertThat(TestStorages.files(storage)).hasSize(1); // no orphans of failed attempts
        writer.checkInvariants();
    }

    @Test
    void inFlightBound_backPressures_andReleasesWhenUploadsFinish() throws Exception {
        Configuration config = config();
        config.set(DfsChangelogOptions.MAX_IN_FLIGHT, MemorySize.parse("8b"));
        config.set(DfsChangelogOptions.PREEMPTIVE_PERSIST_THRESHOLD, MemorySize.parse("4b"));
        config.set(DfsChangelogOptions.UPLOAD_TIMEOUT, Duration.ofHours(1));
        DfsChangelogWriter writer = open(config);
        DfsChangelogWriter other = storage.createWriter("other", RANGE, null);
        CompletableFuture<SnapshotResult<ChangelogStateHandleStreamImpl>> persist;
        CompletableFuture<?> available;
        try (Hang slow = FS.hang(FsOp.CREATE, DSTL_FILES)) {
            writer.append(1, bytes("0123456789")); // pre-emptive upload, blocked
            Waits.until("upload started", WAIT, () -> slow.blockedCalls() == 1);
            assertThat(storage.getAvailabilityProvider().isAvailable()).isFalse();
            available = storage.getAvailabilityProvider().getAvailableFuture();
            assertThat(available).isNotDone();

            other.append(2, bytes("abcdefghij")); // over its threshold, but held back
            assertThat(other.notUploadedBytes()).isEqualTo(10);

            // a checkpoint is never refused, even while back-pressured
            persist = other.persist(SequenceNumber.of(0), 1);
        }
        available.get(1, TimeUnit.MINUTES);
        ChangelogStateHandleStreamImpl handle =
                persist.get(1, TimeUnit.MINUTES).getJobManagerOwnedSnapshot();
        assertThat(Changes.read(storage.createReader(), handle)).containsExactly("2:abcdefghij");
        Waits.until(
                "storage available", WAIT, () -> storage.getAvailabilityProvider().isAvailable());
        writer.checkInvariants();
        other.checkInvariants();
    }

    // ---- findings of issue 13; each failed before its fix ----------------------------------

    @Test
    void hungUpload_isGivenUpAtTheDeadline_freeingItsBytesAndThreads() throws Exception {
        Configuration config = config();
        config.set(DfsChangelogOptions.UPLOAD_TIMEOUT, Duration.ofMillis(20));
        config.set(DfsChangelogOptions.MAX_ATTEMPTS, 2);
        config.set(DfsChangelogOptions.UPLOAD_THREADS, 2);
        // far above the 20 ms hedge delay, so the hedge surely reaches the hang and the healthy
        // persist afterwards finishes in time on a loaded machine
        config.set(DfsChangelogOptions.UPLOAD_DEADLINE, Duration.ofSeconds(3));
        DfsChangelogWriter writer = open(config);
        try (Hang hung = FS.hang(FsOp.CREATE, DSTL_FILES)) {
            writer.append(1, bytes("a"));
            CompletableFuture<SnapshotResult<ChangelogStateHandleStreamImpl>> stuck =
                    writer.persist(SequenceNumber.of(0), 1); // the attempt and its hedge hang

            assertThatThrownBy(() -> stuck.get(20, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .hasStackTraceContaining("did not finish within")
                    .hasMessageContaining(
                            "DSTL upload to " + storage.getDirectory() + " did not finish");
            Waits.until("in-flight bytes freed", WAIT, () -> inFlight(storage) == 0);
            // both upload threads were taken by the hung attempts: they were interrupted
            Waits.until("upload threads left the hang", WAIT, () -> hung.blockedCalls() == 0);
            assertThat(hung.totalBlockedCalls()).isEqualTo(2);
            writer.checkInvariants();
        }
        writer.append(2, bytes("b"));
        ChangelogStateHandleStreamImpl handle =
                writer.persist(SequenceNumber.of(0), 2)
                        .get(20, TimeUnit.SECONDS)
                        .getJobManagerOwnedSnapshot();
        assertThat(Changes.read(storage.createReader(), handle)).containsExactly("1:a", "2:b");
        Waits.until(
                "no file of the abandoned attempts remains",
                WAIT,
                () -> TestStorages.files(storage).equals(List.of(fileName(handle))));
    }

    @Test
    void storageClose_doesNotWaitForAHungUpload() throws Exception {
        Configuration config = config();
        config.set(DfsChangelogOptions.UPLOAD_TIMEOUT, Duration.ofHours(1));
        DfsChangelogWriter writer = open(config);
        try (Hang hung = FS.hang(FsOp.CREATE, DSTL_FILES)) {
            writer.append(1, bytes("a"));
            CompletableFuture<SnapshotResult<ChangelogStateHandleStreamImpl>> persist =
                    writer.persist(SequenceNumber.of(0), 1);
            Waits.until("the upload hangs", WAIT, () -> hung.blockedCalls() == 1);

            // Flink closes the storage on the TaskManager's RPC main thread
            Assertions.assertTimeoutPreemptively(Duration.ofSeconds(10), storage::close);
            DfsBatchedChangelogStorage closed = storage;
            storage = null;
            assertThatThrownBy(() -> persist.get(20, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .hasStackTraceContaining("closed");
            assertThat(inFlight(closed)).isZero();
            Waits.until("the attempt was interrupted", WAIT, () -> hung.blockedCalls() == 0);
            assertThat(closed.awaitBackgroundWork(WAIT)).isTrue();
        }
    }

    @Test
    void storageClose_letsAFailedAttemptFinishDeletingItsFile() throws Exception {
        Configuration config = config();
        config.set(DfsChangelogOptions.MAX_ATTEMPTS, 1);
        DfsChangelogWriter writer = open(config);
        try (Hang deleting = FS.hang(FsOp.DELETE, DSTL_FILES)) {
            FS.failNextWrites(1, 0); // a partial file, which the attempt deletes when it fails
            writer.append(1, bytes("a"));
            CompletableFuture<SnapshotResult<ChangelogStateHandleStreamImpl>> persist =
                    writer.persist(SequenceNumber.of(0), 1);
            Waits.until("the attempt deletes its file", WAIT, () -> deleting.blockedCalls() == 1);
            assertThat(TestStorages.files(storage)).hasSize(1);

            // the job leaves the TaskManager while the delete is on its way (a slow HDFS or S3
            // call): closing must not interrupt it, or the file is left behind
            DfsBatchedChangelogStorage closed = storage;
            storage = null;
            closed.close();
            deleting.release();
            assertThat(closed.awaitBackgroundWork(WAIT)).isTrue();
            assertThat(TestStorages.files(closed)).isEmpty();
            assertThat(persist).isCompletedExceptionally();
        }
    }

    @Test
    void failedTask_deletesPreemptiveUploadsNoResultHandedOut() throws Exception {
        Configuration config = config();
        config.set(DfsChangelogOptions.PREEMPTIVE_PERSIST_THRESHOLD, MemorySize.parse("8b"));
        config.set(DfsChangelogOptions.UPLOAD_TIMEOUT, Duration.ofHours(1));
        DfsChangelogWriter writer = open(config);
        writer.append(1, bytes("a"));
        ChangelogStateHandleStreamImpl cp1 =
                writer.persist(SequenceNumber.of(0), 1)
                        .get(20, TimeUnit.SECONDS)
                        .getJobManagerOwnedSnapshot();
        String cp1File = fileName(cp1);

        writer.append(2, bytes("0123456789")); // sqn 1: uploaded pre-emptively
        Waits.until("pre-emptive upload", WAIT, () -> TestStorages.files(storage).size() == 2);
        List<String> preemptive = new java.util.ArrayList<>(TestStorages.files(storage));
        preemptive.remove(cp1File);

        try (Hang hung = FS.hang(FsOp.CREATE, DSTL_FILES)) {
            writer.append(3, bytes("c")); // sqn 2, its upload hangs
            SequenceNumber lastUploadedTo = writer.nextSequenceNumber();
            CompletableFuture<SnapshotResult<ChangelogStateHandleStreamImpl>> cp2 =
                    writer.persist(SequenceNumber.of(0), 2);
            Waits.until("cp2 upload hangs", WAIT, () -> hung.blockedCalls() == 1);

            // the task fails: Flink truncates the tail after the last persist and closes
            writer.truncateAndClose(lastUploadedTo);
            assertThat(cp2).isCompletedExceptionally();
        }
        Waits.until(
                "only the file handed out for checkpoint 1 remains, not " + preemptive,
                WAIT,
                () -> TestStorages.files(storage).equals(List.of(cp1File)));
    }

    @Test
    void resetWithPendingPersist_thenTruncate_deletesTheNeverHandedOutFile() throws Exception {
        Configuration config = config();
        config.set(DfsChangelogOptions.UPLOAD_TIMEOUT, Duration.ofHours(1));
        DfsChangelogWriter writer = open(config);
        CompletableFuture<SnapshotResult<ChangelogStateHandleStreamImpl>> cp1;
        SequenceNumber to;
        try (Hang slow = FS.hang(FsOp.CREATE, DSTL_FILES)) {
            writer.append(1, bytes("a"));
            to = writer.nextSequenceNumber();
            cp1 = writer.persist(SequenceNumber.of(0), 1);
            Waits.until("upload hangs", WAIT, () -> slow.blockedCalls() == 1);
            writer.reset(SequenceNumber.of(0), to, 1); // checkpoint 1 aborted, persist pending
        }
        Waits.until(
                "upload finished",
                WAIT,
                () -> TestStorages.files(storage).size() == 1 && cp1.isDone());
        assertThat(cp1).isCompletedExceptionally(); // its result must not be handed out
        writer.checkInvariants();

        writer.truncate(to); // materialized: no checkpoint ever received the file
        Waits.until(
                "never handed-out file deleted", WAIT, () -> TestStorages.files(storage).isEmpty());
    }

    /**
     * Flink creates the storage on the TaskManager's RPC main thread (task submission), for every
     * job of a TaskManager configured with it, changelog on or off. Found in a review: the
     * constructor created the job's directory there, a DFS call without a deadline, so a hanging
     * DFS blocked task deployment and a failing one failed every deployment. The storage makes no
     * file-system call when it is created; the first upload creates the directory (Flink's file
     * systems create missing parents), under the upload's deadline.
     */
    @Test
    void creatingTheStorage_callsNoFileSystem_andTheFirstUploadCreatesTheDirectory()
            throws Exception {
        Configuration config = config();
        File dir = new File(tmp, "dfs");
        DfsChangelogWriter writer;
        try (Hang mkdirs = FS.hang(FsOp.MKDIRS, ".*")) {
            writer = open(config); // would block in the hang before
            assertThat(mkdirs.blockedCalls()).isZero();
        }
        assertThat(dir).doesNotExist();
        writer.append(1, bytes("first"));
        ChangelogStateHandleStreamImpl handle =
                writer.persist(SequenceNumber.of(0), 1)
                        .get(1, TimeUnit.MINUTES)
                        .getJobManagerOwnedSnapshot();
        assertThat(TestStorages.files(storage)).containsExactly(fileName(handle));
    }
}
