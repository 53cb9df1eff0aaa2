package io.github.flinkstate.disagg.backend.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.backend.DisaggregatedKeyedStateBackend;
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
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.CheckpointType;
import org.apache.flink.runtime.checkpoint.CompletedCheckpoint;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A full checkpoint (one a user triggers with type FULL) and an incremental one taken while the
 * full one's asynchronous part has not run yet (max concurrent checkpoints above 1). The full one
 * may not name the files an earlier checkpoint named: it names them through copies and the store
 * swaps the copies in. The incremental one's barrier came before that swap, so its files are the
 * originals; if it names them where they are and the full one completes first, the full one's
 * completion subsumes the earlier checkpoint, Flink's registry deletes the originals (only that
 * checkpoint used them), and the incremental checkpoint completes naming deleted files. Found in a
 * review: every restore from it then failed.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FullAndIncrementalCheckpointRaceTest {

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

    @Test
    void anIncrementalCheckpointTakenDuringAFullOne_namesNoFileTheFullOneLetsFlinkDelete()
            throws Exception {
        DisaggregatedKeyedStateBackend<Integer> b =
                job("primary").create(DisaggBackends.ALL, List.of());
        fixture.write(b, 1);
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
        checkpoints.complete(1, 1);
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
        KeyedFixture.value(b).update(-2L); // the incremental one's own memtable
        RunnableFuture<SnapshotResult<KeyedStateHandle>> incremental =
                b.snapshot(
                        3,
                        0L,
                        checkpoints.start(3),
                        CheckpointOptions.forCheckpointWithDefaultLocation());
        // both memtables flushed: the incremental checkpoint's version (pinned by its flush) still
        // holds checkpoint 1's files, before the full one's asynchronous part swaps them
        Waits.until(
                "the frozen memtables flushed",
                Duration.ofSeconds(30),
                () -> b.store().stats().flushes() >= flushesBefore + 2);
        full.run();
        checkpoints.acknowledge(2, 0, full.get().getJobManagerOwnedSnapshot());
        checkpoints.complete(2, 1); // subsumes checkpoint 1: Flink deletes what only it used
        incremental.run();
        checkpoints.acknowledge(3, 0, incremental.get().getJobManagerOwnedSnapshot());
        CompletedCheckpoint cp3 = checkpoints.complete(3, 1);

        for (String file : JobCheckpoints.engineFiles(cp3)) {
            assertThat(new File(new Path(file).toUri())).as("named by checkpoint 3").exists();
        }
        DisaggregatedKeyedStateBackend<Integer> restored =
                job("restored")
                        .create(
                                DisaggBackends.ALL,
                                JobCheckpoints.handlesFor(cp3, DisaggBackends.ALL));
        restored.setCurrentKey(0);
        assertThat(KeyedFixture.value(restored).value()).isEqualTo(-1L);
        KeyedFixture.value(restored).update(1L); // key 0's value in version 1
        restored.setCurrentKey(1);
        assertThat(KeyedFixture.value(restored).value()).isEqualTo(-2L);
        KeyedFixture.value(restored).update(1001L); // key 1's value in version 1
        assertThat(fixture.verify(restored, 1)).isEqualTo(KEYS);
    }
}
