package io.github.flinkstate.disagg.backend.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.DisaggregatedOptions;
import io.github.flinkstate.disagg.backend.DisaggregatedKeyedStateBackend;
import io.github.flinkstate.disagg.backend.testutil.DisaggBackends;
import io.github.flinkstate.disagg.backend.testutil.JobCheckpoints;
import io.github.flinkstate.disagg.backend.testutil.KeyedFixture;
import java.io.File;
import java.util.List;
import java.util.concurrent.RunnableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.CheckpointType;
import org.apache.flink.runtime.checkpoint.CompletedCheckpoint;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.filesystem.RelativeFileStateHandle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The copies a checkpoint writes of files it may not name (here: every restored file of a full
 * checkpoint after a NO_CLAIM resume, compacted away after the barrier) are shared state, not
 * exclusive files: Flink returns exclusive files as relative handles, which a later checkpoint
 * could not name. Only a savepoint's copies are exclusive. From a review: the scope was chosen by
 * "every file copied", which such a checkpoint also meets.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FullCheckpointCopyScopeTest {

    @TempDir File tmp;

    @Test
    void aFullCheckpointThatCopiesEveryFile_writesSharedCopies() throws Exception {
        KeyedFixture fixture = new KeyedFixture(300);
        CompletedCheckpoint cp1;
        try (DisaggBackends job1 = DisaggBackends.inLocalDir(new File(tmp, "old"), "1mb")) {
            DisaggregatedKeyedStateBackend<Integer> first =
                    job1.create(DisaggBackends.ALL, List.of());
            fixture.write(first, 1);
            JobCheckpoints checkpoints1 =
                    new JobCheckpoints(
                            new File(tmp, "chk1").toURI().toString(),
                            1,
                            true,
                            RecoveryClaimMode.CLAIM);
            checkpoints1.acknowledge(
                    1,
                    0,
                    DisaggBackends.snapshot(
                                    first,
                                    1,
                                    checkpoints1.start(1),
                                    CheckpointOptions.forCheckpointWithDefaultLocation())
                            .getJobManagerOwnedSnapshot());
            cp1 = checkpoints1.complete(1, 1);
        }
        try (DisaggBackends job2 =
                new DisaggBackends(
                        DisaggBackends.backend(
                                        new File(tmp, "new").toURI().toString(),
                                        MemorySize.parse("1mb"))
                                .with(DisaggregatedOptions.BACKGROUND_COPY, false))) {
            JobCheckpoints checkpoints2 =
                    new JobCheckpoints(
                            new File(tmp, "chk2").toURI().toString(),
                            1,
                            true,
                            RecoveryClaimMode.NO_CLAIM);
            CompletedCheckpoint resumed = checkpoints2.restore(cp1, RecoveryClaimMode.NO_CLAIM);
            DisaggregatedKeyedStateBackend<Integer> b =
                    job2.create(
                            DisaggBackends.ALL,
                            JobCheckpoints.handlesFor(resumed, DisaggBackends.ALL));
            long id = resumed.getCheckpointID() + 1;
            RunnableFuture<SnapshotResult<KeyedStateHandle>> full =
                    b.snapshot(
                            id,
                            0L,
                            checkpoints2.start(id),
                            new CheckpointOptions(
                                    CheckpointType.FULL_CHECKPOINT,
                                    CheckpointStorageLocationReference.getDefault()));
            b.compactAll(); // after the barrier: no restored file is live any more
            full.run();
            IncrementalRemoteKeyedStateHandle handle =
                    (IncrementalRemoteKeyedStateHandle) full.get().getJobManagerOwnedSnapshot();
            assertThat(handle.getSharedState()).as("the barrier's files, all copied").isNotEmpty();
            assertThat(handle.getSharedState())
                    .noneMatch(e -> e.getHandle() instanceof RelativeFileStateHandle);

            checkpoints2.acknowledge(id, 0, handle);
            CompletedCheckpoint cp2 = checkpoints2.complete(id, 1);
            DisaggregatedKeyedStateBackend<Integer> restored =
                    job2.create(
                            DisaggBackends.ALL, JobCheckpoints.handlesFor(cp2, DisaggBackends.ALL));
            assertThat(fixture.verify(restored, 1)).isEqualTo(300);
        }
    }
}
