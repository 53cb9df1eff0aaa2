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
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.changelog.ChangelogStateHandleStreamImpl;
import org.apache.flink.runtime.state.changelog.SequenceNumber;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.junit.jupiter.api.AfterEach;
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
}
