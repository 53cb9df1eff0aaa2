package io.github.flinkstate.changelog.upload;

import static io.github.flinkstate.changelog.testutils.Changes.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.changelog.DfsBatchedChangelogStorage;
import io.github.flinkstate.changelog.DfsChangelogOptions;
import io.github.flinkstate.changelog.testutils.Changes;
import io.github.flinkstate.changelog.testutils.FaultInjectingFileSystem;
import io.github.flinkstate.changelog.testutils.TestStorages;
import java.io.File;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
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
 * Uploads against {@link FaultInjectingFileSystem}: hedging of slow attempts (the winner is kept,
 * the loser's file deleted), retries of failing attempts, a final failure that fails only the
 * checkpoint, and back-pressure when the in-flight bound is reached. No timing assertions: slow
 * attempts block on latches.
 */
class UploadFaultInjectionTest {

    private static final KeyGroupRange RANGE = KeyGroupRange.of(0, 3);

    @TempDir File tmp;

    private DfsBatchedChangelogStorage storage;

    @BeforeEach
    void resetFaults() {
        FaultInjectingFileSystem.reset();
    }

    @AfterEach
    void close() throws Exception {
        FaultInjectingFileSystem.reset();
        if (storage != null) {
            storage.getRegistry().checkInvariants();
            storage.close();
        }
    }

    private Configuration config() {
        Configuration config =
                TestStorages.config(FaultInjectingFileSystem.path(new File(tmp, "dfs")));
        config.set(DfsChangelogOptions.RETRY_DELAY, Duration.ofMillis(1));
        return config;
    }

    private DfsChangelogWriter open(Configuration config) throws Exception {
        storage = TestStorages.storage(config, new File(tmp, "local"));
        return storage.createWriter("op", RANGE, null);
    }

    private static String fileName(ChangelogStateHandleStreamImpl handle) {
        return ((FileStateHandle) handle.getHandlesAndOffsets().get(0).f0).getFilePath().getName();
    }

    @Test
    void slowUpload_isHedged_winnerKept_loserFileDeleted() throws Exception {
        Configuration config = config();
        config.set(DfsChangelogOptions.UPLOAD_TIMEOUT, Duration.ofMillis(20));
        DfsChangelogWriter writer = open(config);
        CountDownLatch slow = new CountDownLatch(1);
        FaultInjectingFileSystem.blockNextCreate(slow);

        writer.append(1, bytes("hedged"));
        ChangelogStateHandleStreamImpl handle =
                writer.persist(SequenceNumber.of(0), 1).get().getJobManagerOwnedSnapshot();

        assertThat(storage.getMetrics().hedgedAttempts()).isPositive();
        assertThat(Changes.read(storage.createReader(), handle)).containsExactly("1:hedged");
        String winner = fileName(handle);

        slow.countDown(); // the first attempt now writes its file and must delete it
        TestStorages.waitUntil(
                () ->
                        FaultInjectingFileSystem.creates() >= 2
                                && TestStorages.files(storage).equals(List.of(winner)),
                "only the winner's file remains");
        TestStorages.waitUntil(
                () -> storage.getMetrics().attempts() == FaultInjectingFileSystem.creates(),
                "all attempts finished");
        assertThat(TestStorages.files(storage)).containsExactly(winner);
        assertThat(storage.getRegistry().isTracked(handle.getHandlesAndOffsets().get(0).f0))
                .isTrue();
    }

    @Test
    void failingAttempts_areRetried() throws Exception {
        DfsChangelogWriter writer = open(config());
        FaultInjectingFileSystem.failNextCreates(2);
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
        FaultInjectingFileSystem.failNextCreates(2);
        writer.append(1, bytes("a"));

        CompletableFuture<SnapshotResult<ChangelogStateHandleStreamImpl>> failed =
                writer.persist(SequenceNumber.of(0), 1);
        assertThatThrownBy(failed::get)
                .isInstanceOf(ExecutionException.class)
                .hasStackTraceContaining("Injected failure");
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
        CountDownLatch slow = new CountDownLatch(1);
        FaultInjectingFileSystem.blockNextCreate(slow);

        writer.append(1, bytes("0123456789")); // pre-emptive upload, blocked
        TestStorages.waitUntil(() -> FaultInjectingFileSystem.creates() == 1, "upload started");
        assertThat(storage.getAvailabilityProvider().isAvailable()).isFalse();
        CompletableFuture<?> available = storage.getAvailabilityProvider().getAvailableFuture();
        assertThat(available).isNotDone();

        other.append(2, bytes("abcdefghij")); // over its threshold, but held back
        assertThat(other.notUploadedBytes()).isEqualTo(10);

        // a checkpoint is never refused, even while back-pressured
        CompletableFuture<SnapshotResult<ChangelogStateHandleStreamImpl>> persist =
                other.persist(SequenceNumber.of(0), 1);

        slow.countDown();
        available.get();
        ChangelogStateHandleStreamImpl handle = persist.get().getJobManagerOwnedSnapshot();
        assertThat(Changes.read(storage.createReader(), handle)).containsExactly("2:abcdefghij");
        TestStorages.waitUntil(
                () -> storage.getAvailabilityProvider().isAvailable(), "storage available");
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
        config.set(DfsChangelogOptions.UPLOAD_DEADLINE, Duration.ofMillis(300));
        DfsChangelogWriter writer = open(config);
        CountDownLatch hung = new CountDownLatch(1);
        try {
            FaultInjectingFileSystem.blockNextCreate(hung); // first attempt hangs
            FaultInjectingFileSystem.blockNextCreate(hung); // and its hedge too
            writer.append(1, bytes("a"));
            CompletableFuture<SnapshotResult<ChangelogStateHandleStreamImpl>> stuck =
                    writer.persist(SequenceNumber.of(0), 1);

            assertThatThrownBy(() -> stuck.get(20, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .hasStackTraceContaining("did not finish within");
            TestStorages.waitUntil(
                    () ->
                            ((InFlightLimiter) storage.getAvailabilityProvider()).inFlightBytes()
                                    == 0,
                    "in-flight bytes freed");
            writer.checkInvariants();

            // both upload threads were taken by the hung attempts: they must be free again
            writer.append(2, bytes("b"));
            ChangelogStateHandleStreamImpl handle =
                    writer.persist(SequenceNumber.of(0), 2)
                            .get(20, TimeUnit.SECONDS)
                            .getJobManagerOwnedSnapshot();
            assertThat(Changes.read(storage.createReader(), handle)).containsExactly("1:a", "2:b");
            TestStorages.waitUntil(
                    () -> TestStorages.files(storage).equals(List.of(fileName(handle))),
                    "no file of the abandoned attempts remains");
        } finally {
            hung.countDown();
        }
    }

    @Test
    void storageClose_doesNotWaitForAHungUpload() throws Exception {
        Configuration config = config();
        config.set(DfsChangelogOptions.UPLOAD_TIMEOUT, Duration.ofHours(1));
        DfsChangelogWriter writer = open(config);
        CountDownLatch hung = new CountDownLatch(1);
        try {
            FaultInjectingFileSystem.blockNextCreate(hung);
            writer.append(1, bytes("a"));
            CompletableFuture<SnapshotResult<ChangelogStateHandleStreamImpl>> persist =
                    writer.persist(SequenceNumber.of(0), 1);
            TestStorages.waitUntil(() -> FaultInjectingFileSystem.creates() == 1, "upload hangs");

            // Flink closes the storage on the TaskManager's RPC main thread
            Assertions.assertTimeoutPreemptively(Duration.ofSeconds(10), storage::close);
            DfsBatchedChangelogStorage closed = storage;
            storage = null;
            assertThatThrownBy(() -> persist.get(20, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .hasStackTraceContaining("closed");
            assertThat(((InFlightLimiter) closed.getAvailabilityProvider()).inFlightBytes())
                    .isZero();
        } finally {
            hung.countDown();
        }
    }

    @Test
    void failedTask_deletesPreemptiveUploadsNoResultHandedOut() throws Exception {
        Configuration config = config();
        config.set(DfsChangelogOptions.PREEMPTIVE_PERSIST_THRESHOLD, MemorySize.parse("8b"));
        config.set(DfsChangelogOptions.UPLOAD_TIMEOUT, Duration.ofHours(1));
        DfsChangelogWriter writer = open(config);
        CountDownLatch hung = new CountDownLatch(1);
        try {
            writer.append(1, bytes("a"));
            ChangelogStateHandleStreamImpl cp1 =
                    writer.persist(SequenceNumber.of(0), 1)
                            .get(20, TimeUnit.SECONDS)
                            .getJobManagerOwnedSnapshot();
            String cp1File = fileName(cp1);

            writer.append(2, bytes("0123456789")); // sqn 1: uploaded pre-emptively
            TestStorages.waitUntil(
                    () -> TestStorages.files(storage).size() == 2, "pre-emptive upload");
            List<String> preemptive = new java.util.ArrayList<>(TestStorages.files(storage));
            preemptive.remove(cp1File);

            FaultInjectingFileSystem.blockNextCreate(hung);
            writer.append(3, bytes("c")); // sqn 2, its upload hangs
            SequenceNumber lastUploadedTo = writer.nextSequenceNumber();
            CompletableFuture<SnapshotResult<ChangelogStateHandleStreamImpl>> cp2 =
                    writer.persist(SequenceNumber.of(0), 2);
            TestStorages.waitUntil(() -> FaultInjectingFileSystem.creates() == 3, "cp2 upload");

            // the task fails: Flink truncates the tail after the last persist and closes
            writer.truncateAndClose(lastUploadedTo);
            assertThat(cp2).isCompletedExceptionally();
            hung.countDown();

            TestStorages.waitUntil(
                    () -> TestStorages.files(storage).equals(List.of(cp1File)),
                    "only the file handed out for checkpoint 1 remains, not " + preemptive);
        } finally {
            hung.countDown();
        }
    }

    @Test
    void resetWithPendingPersist_thenTruncate_deletesTheNeverHandedOutFile() throws Exception {
        Configuration config = config();
        config.set(DfsChangelogOptions.UPLOAD_TIMEOUT, Duration.ofHours(1));
        DfsChangelogWriter writer = open(config);
        CountDownLatch slow = new CountDownLatch(1);
        try {
            FaultInjectingFileSystem.blockNextCreate(slow);
            writer.append(1, bytes("a"));
            SequenceNumber to = writer.nextSequenceNumber();
            CompletableFuture<SnapshotResult<ChangelogStateHandleStreamImpl>> cp1 =
                    writer.persist(SequenceNumber.of(0), 1);
            TestStorages.waitUntil(() -> FaultInjectingFileSystem.creates() == 1, "upload");

            writer.reset(SequenceNumber.of(0), to, 1); // checkpoint 1 aborted, persist pending
            slow.countDown();
            TestStorages.waitUntil(
                    () -> TestStorages.files(storage).size() == 1 && cp1.isDone(),
                    "upload finished");
            assertThat(cp1).isCompletedExceptionally(); // its result must not be handed out
            writer.checkInvariants();

            writer.truncate(to); // materialized: no checkpoint ever received the file
            TestStorages.waitUntil(
                    () -> TestStorages.files(storage).isEmpty(), "never handed-out file deleted");
        } finally {
            slow.countDown();
        }
    }
}
