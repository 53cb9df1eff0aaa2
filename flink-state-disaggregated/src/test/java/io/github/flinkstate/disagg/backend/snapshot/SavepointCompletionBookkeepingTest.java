package io.github.flinkstate.disagg.backend.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.backend.DisaggregatedKeyedStateBackend;
import io.github.flinkstate.disagg.backend.testutil.DisaggBackends;
import io.github.flinkstate.disagg.backend.testutil.KeyedFixture;
import io.github.flinkstate.disagg.backend.testutil.LocalDirs;
import java.io.File;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.RunnableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.SavepointType;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.StateUtil;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A savepoint hands no engine file over (a native one copies them all, Flink writes a canonical one
 * from {@code savepoint()}). Flink tells the tasks of a completed savepoint only for a
 * stop-with-savepoint ({@link SavepointType#suspend}, {@code terminate}), which also aborts the
 * checkpoints still pending on the JobManager; a task's snapshot of such a checkpoint may still be
 * discarded on the TaskManager afterwards (it never reached the JobManager), and the files it alone
 * had been given must then go back to the store. Before the fix the savepoint's completion ended
 * the TaskManager's bookkeeping of the older checkpoint, and a file the store had dropped while
 * that checkpoint held it was left behind by everybody.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SavepointCompletionBookkeepingTest {

    @TempDir File tmp;

    @ParameterizedTest(name = "{0} savepoint")
    @EnumSource(SavepointFormatType.class)
    void aCheckpointDiscardedAfterALaterSavepointCompleted_leavesNoEngineFile(
            SavepointFormatType format) throws Exception {
        KeyedFixture fixture = new KeyedFixture(200);
        try (DisaggBackends backends = DisaggBackends.inLocalDir(new File(tmp, "primary"), "1mb")) {
            DisaggregatedKeyedStateBackend<Integer> b =
                    backends.create(DisaggBackends.ALL, List.of());
            fixture.write(b, 1);
            RunnableFuture<SnapshotResult<KeyedStateHandle>> checkpoint =
                    b.snapshot(
                            1,
                            0L,
                            LocalDirs.checkpointLocation(new File(tmp, "chk"), 1),
                            CheckpointOptions.forCheckpointWithDefaultLocation());
            checkpoint.run();
            List<String> handedToCheckpoint1 = files("primary");
            assertThat(handedToCheckpoint1).as("checkpoint 1 flushed a file").isNotEmpty();

            // the store drops checkpoint 1's file while checkpoint 1 still holds it
            fixture.write(b, 2);
            b.store().flush();
            b.compactAll();
            assertThat(b.store().liveFiles())
                    .as("checkpoint 1's file was compacted away")
                    .noneMatch(f -> handedToCheckpoint1.contains(new Path(f).getName()));

            if (format == SavepointFormatType.NATIVE) {
                RunnableFuture<SnapshotResult<KeyedStateHandle>> savepoint =
                        b.snapshot(
                                2,
                                0L,
                                LocalDirs.checkpointLocation(new File(tmp, "chk"), 2),
                                new CheckpointOptions(
                                        SavepointType.suspend(format),
                                        CheckpointStorageLocationReference.getDefault()));
                savepoint.run();
                assertThat(savepoint.get().getJobManagerOwnedSnapshot()).isNotNull();
            }
            // a canonical savepoint Flink writes from savepoint()'s resources: the backend only
            // hears of its completion
            b.notifyCheckpointComplete(2);

            // checkpoint 1 never reached the JobManager: Flink discards it on the TaskManager
            StateUtil.discardStateFuture(checkpoint);

            assertThat(files("primary"))
                    .as("checkpoint 1's file, which nobody owns any more, is deleted")
                    .doesNotContainAnyElementsOf(handedToCheckpoint1);
            backends.dispose(b);
            assertThat(files("primary")).as("engine files left after the dispose").isEmpty();
        }
    }

    /** Names of the regular files under {@code tmp/<dir>}. */
    private List<String> files(String dir) throws IOException {
        return LocalDirs.files(new File(tmp, dir)).stream()
                .map(f -> new File(f).getName())
                .collect(Collectors.toList());
    }
}
