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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the snapshots remember of the files checkpoints named must stay bounded by the files the
 * store still uses: a job runs for months, and its compactions replace files all the time. Before,
 * every file any checkpoint had named stayed remembered until the backend was disposed.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NamedFilesMemoryTest {

    @TempDir File tmp;

    @Test
    void filesTheStoreNoLongerUses_areForgotten() throws Exception {
        KeyedFixture fixture = new KeyedFixture(200);
        try (DisaggBackends backends = DisaggBackends.inLocalDir(new File(tmp, "primary"), "1mb")) {
            DisaggregatedKeyedStateBackend<Integer> b =
                    backends.create(DisaggBackends.ALL, List.of());
            int checkpoints = 30;
            for (long id = 1; id <= checkpoints; id++) {
                fixture.write(b, (int) id);
                DisaggBackends.snapshot(
                        b,
                        id,
                        LocalDirs.checkpointLocation(new File(tmp, "chk"), id),
                        CheckpointOptions.forCheckpointWithDefaultLocation());
                b.notifyCheckpointComplete(id);
                b.compactAll(); // the files this checkpoint named leave the store
            }
            assertThat(b.store().liveFiles()).hasSizeLessThan(checkpoints);
            assertThat(b.namedFilesHeld())
                    .as("names held, against %s files in use", b.store().liveFiles())
                    .isLessThanOrEqualTo(b.store().liveFiles().size());
            fixture.verify(b, checkpoints);
        }
    }
}
