package io.github.flinkstate.benchmarks.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.benchmarks.scenario.changelog.ChangelogConfigs;
import io.github.flinkstate.benchmarks.scenario.changelog.ChangelogResult;
import io.github.flinkstate.benchmarks.scenario.changelog.ChangelogRun;
import io.github.flinkstate.benchmarks.scenario.changelog.DfsLatency;
import java.io.File;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * One configuration of the changelog scenario on a tiny load: our DSTL writes through the simulated
 * DFS (the kit's InjectingFileSystem behind {@code inject://}), the counters see its files, and the
 * restore is measured. No timing assertions.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ChangelogScenarioTest {

    @TempDir File tmp;

    @Test
    void dfsBatched_writesThroughTheSlowDfs_andRestores() throws Exception {
        File dstl = new File(tmp, "dstl");
        dstl.mkdirs();
        ChangelogResult r =
                ChangelogRun.run(
                        "dfs-batched",
                        "value",
                        5_000,
                        1,
                        ChangelogConfigs.of("dfs-batched", dstl, new File(tmp, "cp"), "1 h"),
                        dstl,
                        new DfsLatency(1, 5, 0.5));

        assertThat(r.completedCheckpoints()).isGreaterThanOrEqualTo(2);
        assertThat(r.dstlFiles()).isPositive();
        assertThat(r.dstlBytes()).isPositive();
        assertThat(r.allFilesCreated()).isGreaterThan(r.dstlFiles());
        assertThat(r.tailDelays()).isPositive();
        assertThat(r.restoreMs()).isNotNegative();
        assertThat(r.fullSizeBytes()).isPositive();
        // the restored checkpoint was inspected with our reader: it holds logged changes (no
        // materialization within the hour, so every change since the start is in the log)
        assertThat(r.shape().error()).isNull();
        assertThat(r.shape().logHandles()).isPositive();
        assertThat(r.shape().logChanges()).isPositive();
        assertThat(r.shape().maxSubtaskChanges()).isEqualTo(r.shape().logChanges());
        assertThat(r.shape().logFiles()).isPositive();
    }

    @Test
    void flags_areParsedByTheSharedParser() {
        assertThat(
                        ChangelogScenario.args()
                                .parse(new String[] {"--workload", "window"})
                                .get("workload"))
                .isEqualTo("window");
        assertThatThrownBy(() -> ChangelogScenario.args().parse(new String[] {"--tail", "1"}))
                .hasMessageContaining("unknown flag '--tail'")
                .hasMessageContaining("Usage: ChangelogScenario");
    }
}
