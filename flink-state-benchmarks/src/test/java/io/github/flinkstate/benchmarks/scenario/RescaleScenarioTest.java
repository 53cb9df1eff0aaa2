package io.github.flinkstate.benchmarks.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.benchmarks.common.BackendSpec;
import io.github.flinkstate.benchmarks.scenario.rescale.RescaleCluster;
import io.github.flinkstate.benchmarks.scenario.rescale.RescaleRun;
import io.github.flinkstate.benchmarks.scenario.rescale.RestoreMeasurement;
import io.github.flinkstate.benchmarks.scenario.rescale.RetainedCheckpoint;
import io.github.flinkstate.benchmarks.scenario.rescale.Transition;
import java.io.File;
import java.time.Duration;
import java.util.List;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The rescale scenario on a tiny state (1 MiB): split and merge over HashMap and RocksDB verify
 * every key and measure every subtask; a verify job that finds a wrong or missing value fails. No
 * timing assertions.
 */
class RescaleScenarioTest {

    private static final long KEYS = 4096;
    private static final int VALUE_BYTES = 256;

    @TempDir File tmp;

    @Test
    void splitAndMerge_verifyEveryKeyAndMeasureEverySubtask() throws Exception {
        List<RescaleRun> runs =
                RescaleScenario.run(
                        BackendSpec.parseList("hashmap,rocksdb"),
                        Transition.parseList("2-1,1-2"),
                        KEYS,
                        VALUE_BYTES,
                        1);

        assertThat(runs).hasSize(4);
        for (RescaleRun run : runs) {
            RestoreMeasurement m = run.measurement();
            int to = run.transition().to();
            assertThat(m.keysVerified()).as(run.backend() + " " + run.transition()).isEqualTo(KEYS);
            assertThat(m.subtaskRestoreMs())
                    .hasSize(to)
                    .allSatisfy(ms -> assertThat(ms).isNotNegative());
            assertThat(m.probesPerSubtask())
                    .hasSize(to)
                    .allSatisfy(n -> assertThat(n).isPositive());
            assertThat(m.probesPerSubtask().stream().mapToLong(Long::longValue).sum())
                    .isEqualTo(KEYS);
            assertThat(m.maxRestoreMs())
                    .isEqualTo(
                            m.subtaskRestoreMs().stream()
                                    .mapToLong(Long::longValue)
                                    .max()
                                    .orElseThrow());
            assertThat(run.checkpoint().parallelism()).isEqualTo(run.transition().from());
            assertThat(run.checkpoint().fullBytes()).isGreaterThan(KEYS * VALUE_BYTES);
        }
    }

    @Test
    void disaggregatedAndForSt_claimMode_verifyEveryKeyAndReuseTheCheckpoint() throws Exception {
        List<RescaleRun> runs =
                RescaleScenario.run(
                        BackendSpec.parseList("disaggregated,forst"),
                        Transition.parseList("2-1"),
                        KEYS,
                        VALUE_BYTES,
                        2,
                        RecoveryClaimMode.CLAIM,
                        Duration.ofMinutes(5));

        // Two CLAIM restores of the same checkpoint per backend: the verify job takes no
        // checkpoint, so the claimed one is neither subsumed nor discarded.
        assertThat(runs).hasSize(4);
        for (RescaleRun run : runs) {
            assertThat(run.measurement().keysVerified())
                    .as(run.backend() + " repeat " + run.repeat())
                    .isEqualTo(KEYS);
            assertThat(run.measurement().subtaskRestoreMs()).hasSize(1);
        }
    }

    @Test
    void claimModeFlag() {
        assertThat(RescaleScenario.claimMode("claim")).isEqualTo(RecoveryClaimMode.CLAIM);
        assertThat(RescaleScenario.claimMode("No-Claim")).isEqualTo(RecoveryClaimMode.NO_CLAIM);
        assertThatThrownBy(() -> RescaleScenario.claimMode("legacy"))
                .hasMessageContaining("Unknown claim mode");
    }

    @Test
    void restore_wrongOrMissingValues_failsInsteadOfMeasuring() throws Exception {
        try (RescaleCluster cluster = new RescaleCluster(BackendSpec.hashMap(), tmp, 2)) {
            RetainedCheckpoint cp = cluster.load(2, 1000, 64);

            // Expecting 65-byte values: every stored value is wrong.
            assertThatThrownBy(() -> cluster.restore(cp, 1, 1000, 65))
                    .hasMessageContaining("STATE LOST")
                    .hasMessageContaining("1000 wrong");
            // Probing 100 keys that were never written: they are missing.
            assertThatThrownBy(() -> cluster.restore(cp, 1, 1100, 64))
                    .hasMessageContaining("STATE LOST")
                    .hasMessageContaining("100 missing");
            // The same checkpoint still restores cleanly (NO_CLAIM leaves it intact).
            assertThat(cluster.restore(cp, 1, 1000, 64).keysVerified()).isEqualTo(1000);
        }
    }
}
