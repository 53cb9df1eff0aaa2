package io.github.flinkstate.disagg.backend.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.backend.DisaggregatedKeyedStateBackend;
import io.github.flinkstate.disagg.backend.testutil.DisaggBackends;
import io.github.flinkstate.disagg.backend.testutil.JobCheckpoints;
import io.github.flinkstate.disagg.backend.testutil.KeyedFixture;
import java.io.File;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.CompletedCheckpoint;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * An acknowledgement that reaches the JobManager after it aborted the checkpoint (the checkpoint
 * expired, another task declined it, the job failed over): Flink 2.3 registers its shared state,
 * then discards it, so none of the engine files it names is deleted, neither the completed
 * checkpoint's nor the ones the store still reads.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LateAcknowledgementTest {

    @TempDir File tmp;

    @Test
    void aLateAcknowledgement_deletesNoFileTheStoreOrTheCompletedCheckpointNeeds()
            throws Exception {
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

            assertThat(fixture.verify(b, 2)).as("the running store reads every key").isEqualTo(300);
            DisaggregatedKeyedStateBackend<Integer> restored =
                    backends.create(
                            DisaggBackends.ALL,
                            JobCheckpoints.handlesFor(completed, DisaggBackends.ALL));
            assertThat(fixture.verify(restored, 1))
                    .as("the completed checkpoint restores every key")
                    .isEqualTo(300);
        }
    }

    private static KeyedStateHandle snapshot(
            DisaggregatedKeyedStateBackend<Integer> b, JobCheckpoints job, long id)
            throws Exception {
        return DisaggBackends.snapshot(
                        b, id, job.start(id), CheckpointOptions.forCheckpointWithDefaultLocation())
                .getJobManagerOwnedSnapshot();
    }
}
