package io.github.flinkstate.disagg.backend.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.DisaggregatedOptions;
import io.github.flinkstate.disagg.DisaggregatedStateBackend;
import io.github.flinkstate.disagg.backend.DisaggregatedKeyedStateBackend;
import io.github.flinkstate.disagg.backend.testutil.DisaggBackends;
import io.github.flinkstate.disagg.backend.testutil.JobCheckpoints;
import io.github.flinkstate.disagg.backend.testutil.KeyedFixture;
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RunnableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.CheckpointType;
import org.apache.flink.runtime.checkpoint.CompletedCheckpoint;
import org.apache.flink.runtime.state.CheckpointStorageLocation;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A checkpoint holds exactly the writes made before its synchronous part, whatever its asynchronous
 * part does meanwhile. Found by reading: Flink's forced full checkpoint after a restore from
 * another job's files moves those files into the store in the asynchronous part and then took a new
 * engine snapshot, which flushed (and so included) the writes the task made after the barrier; a
 * restore would apply those records twice.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FullCheckpointBarrierTest {

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

    private DisaggBackends job(String primary, UnaryOperator<DisaggregatedStateBackend> config) {
        DisaggBackends b =
                new DisaggBackends(
                        config.apply(
                                DisaggBackends.backend(
                                        new File(tmp, primary).toURI().toString(),
                                        MemorySize.parse("64kb"))));
        open.add(b);
        return b;
    }

    private static CheckpointOptions options(boolean full) {
        return full
                ? new CheckpointOptions(
                        CheckpointType.FULL_CHECKPOINT,
                        CheckpointStorageLocationReference.getDefault())
                : CheckpointOptions.forCheckpointWithDefaultLocation();
    }

    @Test
    void fullCheckpointAfterARestoreFromAnotherJob_holdsNoWriteAfterTheBarrier() throws Exception {
        assertHoldsExactlyThePreBarrierWrites(true);
    }

    @Test
    void incrementalCheckpointAfterARestore_holdsNoWriteAfterTheBarrier() throws Exception {
        assertHoldsExactlyThePreBarrierWrites(false);
    }

    private void assertHoldsExactlyThePreBarrierWrites(boolean full) throws Exception {
        // job 1 writes version 1 and checkpoints
        DisaggBackends job1 = job("old", UnaryOperator.identity());
        DisaggregatedKeyedStateBackend<Integer> first = job1.create(DisaggBackends.ALL, List.of());
        fixture.write(first, 1);
        JobCheckpoints checkpoints1 =
                new JobCheckpoints(
                        new File(tmp, "chk1").toURI().toString(), 1, true, RecoveryClaimMode.CLAIM);
        CheckpointStorageLocation location1 = checkpoints1.start(1);
        checkpoints1.acknowledge(
                1,
                0,
                DisaggBackends.snapshot(first, 1, location1, options(false))
                        .getJobManagerOwnedSnapshot());
        CompletedCheckpoint cp1 = checkpoints1.complete(1, 1);
        job1.dispose(first);

        // job 2 resumes from it (files inherited, no background copy); before the barrier it
        // writes one value only, so that the inherited files are still live at the checkpoint
        DisaggregatedKeyedStateBackend<Integer> b =
                job("new", c -> c.with(DisaggregatedOptions.BACKGROUND_COPY, false))
                        .create(
                                DisaggBackends.ALL,
                                JobCheckpoints.handlesFor(cp1, DisaggBackends.ALL));
        b.setCurrentKey(0);
        KeyedFixture.value(b).update(-1L);
        JobCheckpoints checkpoints2 =
                new JobCheckpoints(
                        new File(tmp, "chk2").toURI().toString(),
                        1,
                        true,
                        RecoveryClaimMode.NO_CLAIM);
        CheckpointStorageLocation location2 = checkpoints2.start(2);
        // takes the synchronous part of checkpoint 2, writes version 3, then runs the rest
        RunnableFuture<SnapshotResult<KeyedStateHandle>> future =
                b.snapshot(2, 0L, location2, options(full));
        fixture.write(b, 3);
        future.run();
        checkpoints2.acknowledge(2, 0, future.get().getJobManagerOwnedSnapshot());
        CompletedCheckpoint cp2 = checkpoints2.complete(2, 1);

        DisaggregatedKeyedStateBackend<Integer> restored =
                job("restored", UnaryOperator.identity())
                        .create(
                                DisaggBackends.ALL,
                                JobCheckpoints.handlesFor(cp2, DisaggBackends.ALL));
        restored.setCurrentKey(0);
        assertThat(KeyedFixture.value(restored).value()).isEqualTo(-1L);
        KeyedFixture.value(restored).update(1L); // key 0's value in version 1: verify the rest
        assertThat(fixture.verify(restored, 1)).isEqualTo(KEYS);
    }
}
