package io.github.flinkstate.disagg.backend.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.backend.DisaggregatedKeyedStateBackend;
import io.github.flinkstate.disagg.backend.testutil.CanonicalSavepoints;
import io.github.flinkstate.disagg.backend.testutil.DisaggBackends;
import io.github.flinkstate.disagg.backend.testutil.JobCheckpoints;
import io.github.flinkstate.disagg.backend.testutil.KeyedFixture;
import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RunnableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.CheckpointType;
import org.apache.flink.runtime.checkpoint.CompletedCheckpoint;
import org.apache.flink.runtime.checkpoint.SavepointType;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A full checkpoint (one a user triggers with type FULL, or Flink's first after a NO_CLAIM resume)
 * and a second snapshot taken while the full one's asynchronous part has not run yet. The full one
 * may not name the files an earlier checkpoint named: it names them through copies and the store
 * swaps the copies in. The second one's barrier came before that swap, so its files are the
 * originals; when the full one completes, it subsumes the earlier checkpoint and Flink's registry
 * deletes the originals (only that checkpoint used them).
 *
 * <ul>
 *   <li>An incremental checkpoint (max concurrent checkpoints above 1) that named the originals
 *       where they are completed naming deleted files. Found in a review: every restore from it
 *       then failed.
 *   <li>A native savepoint (Flink starts savepoints even when the concurrent-checkpoint limit is
 *       reached) copied the originals into itself and failed on the deleted ones; so did a second
 *       full checkpoint, which also copied them. Each now waits for the full one's asynchronous
 *       part and takes those files from its copies.
 *   <li>A canonical savepoint, which Flink writes from the version pinned at its synchronous part,
 *       read the deleted originals and failed. The store now reads a file it replaced by a copy
 *       from the copy, also for versions pinned before.
 * </ul>
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SnapshotDuringFullCheckpointTest {

    /** The snapshot taken during the full checkpoint. */
    enum Second {
        INCREMENTAL,
        FULL,
        NATIVE_SAVEPOINT,
        CANONICAL_SAVEPOINT
    }

    private static final int KEYS = 2000;

    @TempDir File tmp;

    private final KeyedFixture fixture = new KeyedFixture(KEYS);
    private final List<DisaggBackends> open = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (DisaggBackends b : open) {
            b.close();
        }
    }

    private DisaggBackends job(String primary) {
        DisaggBackends b = DisaggBackends.inLocalDir(new File(tmp, primary), "64kb");
        open.add(b);
        return b;
    }

    @ParameterizedTest
    @EnumSource(Second.class)
    void aSnapshotTakenDuringAFullCheckpoint_namesNoFileTheFullOneLetsFlinkDelete(Second second)
            throws Exception {
        DisaggregatedKeyedStateBackend<Integer> b =
                job("primary").create(DisaggBackends.ALL, List.of());
        fixture.write(b, 1);
        b.compactAll(); // no compaction runs later: each checkpoint below flushes one small file
        JobCheckpoints checkpoints =
                new JobCheckpoints(
                        new File(tmp, "chk").toURI().toString(), 1, true, RecoveryClaimMode.CLAIM);
        checkpoints.acknowledge(
                1,
                0,
                DisaggBackends.snapshot(
                                b,
                                1,
                                checkpoints.start(1),
                                CheckpointOptions.forCheckpointWithDefaultLocation())
                        .getJobManagerOwnedSnapshot());
        CompletedCheckpoint cp1 = checkpoints.complete(1, 1);
        List<String> cp1Files = JobCheckpoints.engineFiles(cp1);
        b.notifyCheckpointComplete(1);

        b.setCurrentKey(0);
        KeyedFixture.value(b).update(-1L); // a write, so that both checkpoints flush a memtable
        long flushesBefore = b.store().stats().flushes();
        RunnableFuture<SnapshotResult<KeyedStateHandle>> full =
                b.snapshot(
                        2,
                        0L,
                        checkpoints.start(2),
                        new CheckpointOptions(
                                CheckpointType.FULL_CHECKPOINT,
                                CheckpointStorageLocationReference.getDefault()));
        b.setCurrentKey(1);
        KeyedFixture.value(b).update(-2L); // the second one's own memtable
        RunnableFuture<SnapshotResult<KeyedStateHandle>> during =
                second == Second.CANONICAL_SAVEPOINT
                        ? CanonicalSavepoints.start(b, 3, checkpoints.start(3))
                        : b.snapshot(3, 0L, checkpoints.start(3), options(second));
        // both memtables flushed: the second snapshot's version (pinned by its flush) still holds
        // checkpoint 1's files, before the full one's asynchronous part swaps them
        Waits.until(
                "the frozen memtables flushed",
                Duration.ofSeconds(30),
                () -> b.store().stats().flushes() >= flushesBefore + 2);
        // the second one's asynchronous part starts first and waits for the full one's (a canonical
        // savepoint's, written by Flink from the pinned version, runs after it instead)
        Thread secondAsync = new Thread(during, "second-async-part");
        if (second != Second.CANONICAL_SAVEPOINT) {
            secondAsync.start();
            Waits.until(
                    "the second snapshot waits for the full one",
                    Duration.ofSeconds(30),
                    () -> secondAsync.getState() == Thread.State.WAITING);
        }
        full.run();
        checkpoints.acknowledge(2, 0, full.get().getJobManagerOwnedSnapshot());
        // subsumes checkpoint 1: Flink deletes what only it used
        List<String> cp2Files = JobCheckpoints.engineFiles(checkpoints.complete(2, 1));
        assertThat(cp2Files)
                .as("the full checkpoint names checkpoint 1's files through copies")
                .doesNotContainAnyElementsOf(cp1Files);
        for (String file : cp1Files) {
            assertThat(new File(new Path(file).toUri())).as("deleted by Flink").doesNotExist();
        }
        if (second == Second.CANONICAL_SAVEPOINT) {
            secondAsync.start();
        }
        secondAsync.join(60_000);
        KeyedStateHandle secondHandle = during.get().getJobManagerOwnedSnapshot();
        List<KeyedStateHandle> restoreFrom;
        if (second == Second.NATIVE_SAVEPOINT || second == Second.CANONICAL_SAVEPOINT) {
            restoreFrom = List.of(secondHandle); // self-contained: restored as it is
        } else {
            checkpoints.acknowledge(3, 0, secondHandle);
            CompletedCheckpoint cp3 = checkpoints.complete(3, 1);
            for (String file : JobCheckpoints.engineFiles(cp3)) {
                assertThat(new File(new Path(file).toUri())).as("named by checkpoint 3").exists();
            }
            if (second == Second.FULL) {
                assertThat(JobCheckpoints.engineFiles(cp3))
                        .as("a full checkpoint names no file an earlier checkpoint named")
                        .doesNotContainAnyElementsOf(cp1Files)
                        .doesNotContainAnyElementsOf(cp2Files);
            }
            restoreFrom = JobCheckpoints.handlesFor(cp3, DisaggBackends.ALL);
        }
        DisaggregatedKeyedStateBackend<Integer> restored =
                job("restored").create(DisaggBackends.ALL, restoreFrom);
        restored.setCurrentKey(0);
        assertThat(KeyedFixture.value(restored).value()).isEqualTo(-1L);
        KeyedFixture.value(restored).update(1L); // key 0's value in version 1
        restored.setCurrentKey(1);
        assertThat(KeyedFixture.value(restored).value()).isEqualTo(-2L);
        KeyedFixture.value(restored).update(1001L); // key 1's value in version 1
        assertThat(fixture.verify(restored, 1)).isEqualTo(KEYS);
    }

    private static CheckpointOptions options(Second second) {
        switch (second) {
            case INCREMENTAL:
                return CheckpointOptions.forCheckpointWithDefaultLocation();
            case FULL:
                return new CheckpointOptions(
                        CheckpointType.FULL_CHECKPOINT,
                        CheckpointStorageLocationReference.getDefault());
            default:
                return new CheckpointOptions(
                        SavepointType.savepoint(SavepointFormatType.NATIVE),
                        CheckpointStorageLocationReference.getDefault());
        }
    }
}
