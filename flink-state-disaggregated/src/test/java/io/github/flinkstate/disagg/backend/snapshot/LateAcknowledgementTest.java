package io.github.flinkstate.disagg.backend.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.backend.DisaggregatedKeyedStateBackend;
import io.github.flinkstate.disagg.backend.testutil.DisaggBackends;
import io.github.flinkstate.disagg.backend.testutil.JobCheckpoints;
import io.github.flinkstate.disagg.backend.testutil.KeyedFixture;
import java.io.File;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.CompletedCheckpoint;
import org.apache.flink.runtime.state.CheckpointStorageLocation;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * An acknowledgement that reaches the JobManager after it aborted the checkpoint (the checkpoint
 * expired, another task declined it, the job failed over) is discarded there without being
 * registered: Flink's {@code IncrementalRemoteKeyedStateHandle} then deletes every shared file it
 * names, except placeholders. Most engine files a checkpoint names are files of the last completed
 * one, which the store still reads and a restore needs: they are named through placeholders and
 * survive. The files the aborted checkpoint named first are deleted (Flink's rule; a store still
 * reading one then fails, and the job restores the completed checkpoint).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LateAcknowledgementTest {

    @TempDir File tmp;

    @Test
    void aLateAcknowledgementDiscarded_keepsTheFilesOfTheCompletedCheckpoint() throws Exception {
        KeyedFixture fixture = new KeyedFixture(300);
        try (DisaggBackends backends = DisaggBackends.inLocalDir(new File(tmp, "primary"), "1mb")) {
            DisaggregatedKeyedStateBackend<Integer> b =
                    backends.create(DisaggBackends.ALL, List.of());
            JobCheckpoints job =
                    new JobCheckpoints(
                            new File(tmp, "chk").toURI().toString(),
                            1,
                            false,
                            RecoveryClaimMode.CLAIM);
            fixture.write(b, 1);
            job.acknowledge(1, 0, snapshot(b, job, 1));
            CompletedCheckpoint completed = job.complete(1, 1);
            b.notifyCheckpointComplete(1);

            fixture.write(b, 2);
            KeyedStateHandle late = snapshot(b, job, 2);
            job.abort(2); // expired before the subtask's acknowledgement arrived
            job.lateAcknowledge(2, late);

            for (String file :
                    namedFiles(JobCheckpoints.handlesFor(completed, DisaggBackends.ALL))) {
                assertThat(new File(URI.create(file)))
                        .as("file of the completed checkpoint")
                        .exists();
            }
            DisaggregatedKeyedStateBackend<Integer> restored =
                    backends.create(
                            DisaggBackends.ALL,
                            JobCheckpoints.handlesFor(completed, DisaggBackends.ALL));
            assertThat(fixture.verify(restored, 1))
                    .as("the completed checkpoint restores every key")
                    .isEqualTo(300);
        }
    }

    private static List<String> namedFiles(List<KeyedStateHandle> handles) {
        List<String> files = new ArrayList<>();
        for (KeyedStateHandle h : handles) {
            for (HandleAndLocalPath e : ((IncrementalRemoteKeyedStateHandle) h).getSharedState()) {
                files.add(((FileStateHandle) e.getHandle()).getFilePath().toUri().toString());
            }
        }
        return files;
    }

    private static KeyedStateHandle snapshot(
            DisaggregatedKeyedStateBackend<Integer> b, JobCheckpoints job, long id)
            throws Exception {
        CheckpointStorageLocation location = job.start(id);
        return DisaggBackends.snapshot(
                        b, id, location, CheckpointOptions.forCheckpointWithDefaultLocation())
                .getJobManagerOwnedSnapshot();
    }
}
