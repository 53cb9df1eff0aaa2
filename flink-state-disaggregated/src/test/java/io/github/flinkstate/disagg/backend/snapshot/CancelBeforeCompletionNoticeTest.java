package io.github.flinkstate.disagg.backend.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.backend.DisaggregatedKeyedStateBackend;
import io.github.flinkstate.disagg.backend.testutil.DisaggBackends;
import io.github.flinkstate.disagg.backend.testutil.JobCheckpoints;
import io.github.flinkstate.disagg.backend.testutil.KeyedFixture;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.CompletedCheckpoint;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A task cancelled right after its checkpoint completed on the JobManager, before the completion
 * notice reached it (what a driver that cancels as soon as the checkpoint shows as completed does):
 * the backend is disposed on the interrupted task thread, after further writes made the store drop
 * the checkpoint's files from its live version. Every file the retained checkpoint names must still
 * exist, and a new job restores it with every value.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CancelBeforeCompletionNoticeTest {

    private static final int KEYS = 3000;

    @TempDir File tmp;

    private final InjectingFileSystem fs = InjectingFileSystem.shared();
    private final KeyedFixture fixture = new KeyedFixture(KEYS);
    private final List<DisaggBackends> open = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        Thread.interrupted();
        for (DisaggBackends b : open) {
            b.close();
        }
    }

    private DisaggBackends job(String primary) {
        DisaggBackends b =
                new DisaggBackends(
                        DisaggBackends.backend(
                                fs.uri(new File(tmp, primary)), MemorySize.parse("64kb")));
        open.add(b);
        return b;
    }

    @Test
    void disposedBeforeTheNotice_onAnInterruptedThread_keepsTheCheckpointsFiles() throws Exception {
        DisaggBackends job1 = job("old");
        DisaggregatedKeyedStateBackend<Integer> b = job1.create(DisaggBackends.ALL, List.of());
        fixture.write(b, 1);
        JobCheckpoints checkpoints =
                new JobCheckpoints(fs.uri(new File(tmp, "chk1")), 1, true, RecoveryClaimMode.CLAIM);
        checkpoints.acknowledge(
                1,
                0,
                DisaggBackends.snapshot(
                                b,
                                1,
                                checkpoints.start(1),
                                CheckpointOptions.forCheckpointWithDefaultLocation())
                        .getJobManagerOwnedSnapshot());
        CompletedCheckpoint cp = checkpoints.complete(1, 1);
        // no notifyCheckpointComplete: the task is cancelled first
        List<String> named = JobCheckpoints.engineFiles(cp);
        assertThat(named).isNotEmpty();
        fixture.write(b, 2);
        b.compactAll(); // every file of checkpoint 1 leaves the live version
        assertThat(b.store().liveFiles()).doesNotContainAnyElementsOf(named);

        Thread.currentThread().interrupt(); // the task was cancelled
        job1.dispose(b);
        assertThat(Thread.interrupted()).as("the cancellation stays visible").isTrue();
        checkpoints.shutdown(org.apache.flink.api.common.JobStatus.CANCELED);
        b.store().awaitQueuedDeletes(); // the disposed store's delete thread is done

        for (String f : named) {
            assertThat(fs.exists(new Path(f))).as("file of the retained checkpoint: " + f).isTrue();
        }
        DisaggregatedKeyedStateBackend<Integer> restored =
                job("new")
                        .create(
                                DisaggBackends.ALL,
                                JobCheckpoints.handlesFor(cp, DisaggBackends.ALL));
        assertThat(fixture.verify(restored, 1)).isEqualTo(KEYS);
    }
}
