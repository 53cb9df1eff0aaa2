package io.github.flinkstate.benchmarks.scenario;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.benchmarks.common.BackendSpec;
import io.github.flinkstate.benchmarks.scenario.checkpoint.CheckpointDurationResult;
import io.github.flinkstate.benchmarks.scenario.checkpoint.CheckpointDurationRun;
import io.github.flinkstate.benchmarks.scenario.checkpoint.NoClaimRestoreResult;
import io.github.flinkstate.benchmarks.scenario.checkpoint.RemoteDfsProfile;
import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import java.io.File;
import java.time.Duration;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The checkpoint-duration scenario on a tiny state (1 MiB): every key is loaded, the first and
 * every measured checkpoint complete and report their sizes. No timing assertions.
 */
class CheckpointDurationScenarioTest {

    @TempDir File tmp;

    @ParameterizedTest
    @ValueSource(strings = {"disaggregated", "rocksdb"})
    void measuresEveryCheckpointAfterTheLoad(String backend) throws Exception {
        CheckpointDurationResult r =
                new CheckpointDurationRun(
                                BackendSpec.parseList(backend).get(0),
                                2,
                                256,
                                2_000,
                                Duration.ofMillis(200),
                                1,
                                3,
                                RemoteDfsProfile.install(0, 0))
                        .run(1L << 20, tmp);

        assertThat(r.backend()).isEqualTo(backend);
        assertThat(r.keys()).isEqualTo(4096);
        assertThat(r.durationsMillis()).hasSize(3).allSatisfy(d -> assertThat(d).isNotNegative());
        assertThat(r.checkpointedBytes()).hasSize(3);
        assertThat(r.syncMillis()).hasSize(3).allSatisfy(d -> assertThat(d).isNotNegative());
        // the values compress well, so only "something was written" holds for every backend
        assertThat(r.firstCheckpointedBytes()).isPositive();
        assertThat(r.stateBytes()).isGreaterThanOrEqualTo(r.firstCheckpointedBytes());
    }

    @ParameterizedTest
    @ValueSource(strings = {"disaggregated", "rocksdb"})
    void runsWithCheckpointsOnTheSimulatedRemoteDfs(String backend) throws Exception {
        try {
            CheckpointDurationResult r =
                    new CheckpointDurationRun(
                                    BackendSpec.parseList(backend).get(0),
                                    2,
                                    256,
                                    2_000,
                                    Duration.ofMillis(200),
                                    0,
                                    2,
                                    RemoteDfsProfile.install(1, 200))
                            .run(1L << 20, tmp);
            assertThat(r.durationsMillis()).hasSize(2);
            assertThat(InjectingFileSystem.shared().counters().calls(FsOp.CREATE))
                    .as("files created on inject://")
                    .isPositive();
        } finally {
            InjectingFileSystem.shared().reset();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"disaggregated", "rocksdb"})
    void measuresTheFirstCheckpointsAfterANoClaimResume(String backend) throws Exception {
        NoClaimRestoreResult r =
                new CheckpointDurationRun(
                                BackendSpec.parseList(backend).get(0),
                                2,
                                256,
                                2_000,
                                Duration.ofMillis(200),
                                0,
                                2,
                                RemoteDfsProfile.install(0, 0))
                        .runNoClaimRestore(1L << 20, tmp);

        assertThat(r.backend()).isEqualTo(backend);
        assertThat(r.firstMillis()).isNotNegative();
        assertThat(r.longestStallMillis()).isNotNegative();
        // NO_CLAIM: the first checkpoint may reference nothing of the restored one
        assertThat(r.firstCheckpointedBytes()).isPositive();
        assertThat(r.laterMillis()).hasSize(2);
    }
}
