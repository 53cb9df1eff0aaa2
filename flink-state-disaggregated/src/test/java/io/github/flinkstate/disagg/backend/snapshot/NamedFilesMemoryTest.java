package io.github.flinkstate.disagg.backend.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.backend.DisaggregatedKeyedStateBackend;
import io.github.flinkstate.disagg.backend.testutil.DisaggBackends;
import io.github.flinkstate.disagg.backend.testutil.KeyedFixture;
import io.github.flinkstate.disagg.backend.testutil.LocalDirs;
import java.io.File;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the snapshots remember of the files checkpoints named must stay bounded by the files the
 * store still uses: a job runs for months, and its compactions replace files all the time. Before,
 * every file any checkpoint had named stayed remembered until the backend was disposed. Restored
 * files count too: they are named by the restored checkpoint, and are forgotten once compactions
 * replaced them.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NamedFilesMemoryTest {

    private static final int CHECKPOINTS = 30;

    @TempDir File tmp;

    @Test
    void filesTheStoreNoLongerUses_areForgotten_alsoAfterARestore() throws Exception {
        KeyedFixture fixture = new KeyedFixture(200);
        try (DisaggBackends backends = DisaggBackends.inLocalDir(new File(tmp, "primary"), "1mb")) {
            DisaggregatedKeyedStateBackend<Integer> b =
                    backends.create(DisaggBackends.ALL, List.of());
            KeyedStateHandle last = checkpointRounds(b, fixture, 1);
            assertBounded(b);
            fixture.verify(b, CHECKPOINTS);
            backends.dispose(b);

            DisaggregatedKeyedStateBackend<Integer> restored =
                    backends.create(DisaggBackends.ALL, List.of(last));
            assertThat(restored.namedFilesHeld()).as("the restored files").isPositive();
            checkpointRounds(restored, fixture, CHECKPOINTS + 1);
            assertBounded(restored);
            fixture.verify(restored, 2 * CHECKPOINTS);
        }
    }

    /**
     * Writes and checkpoints {@link #CHECKPOINTS} rounds, compacting after each; the last handle.
     */
    private KeyedStateHandle checkpointRounds(
            DisaggregatedKeyedStateBackend<Integer> b, KeyedFixture fixture, int firstId)
            throws Exception {
        KeyedStateHandle last = null;
        for (long id = firstId; id < firstId + CHECKPOINTS; id++) {
            fixture.write(b, (int) id);
            last =
                    DisaggBackends.snapshot(
                                    b,
                                    id,
                                    LocalDirs.checkpointLocation(new File(tmp, "chk"), id),
                                    CheckpointOptions.forCheckpointWithDefaultLocation())
                            .getJobManagerOwnedSnapshot();
            b.notifyCheckpointComplete(id);
            b.compactAll(); // the files this checkpoint named leave the store
        }
        return last;
    }

    private static void assertBounded(DisaggregatedKeyedStateBackend<Integer> b) {
        assertThat(b.store().liveFiles()).hasSizeLessThan(CHECKPOINTS);
        assertThat(b.namedFilesHeld())
                .as("names held, against %s files in use", b.store().liveFiles())
                .isLessThanOrEqualTo(b.store().liveFiles().size());
    }
}
