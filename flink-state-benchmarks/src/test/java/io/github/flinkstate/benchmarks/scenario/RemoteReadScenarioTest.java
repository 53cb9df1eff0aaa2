package io.github.flinkstate.benchmarks.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.benchmarks.scenario.remote.RemoteReadResult;
import io.github.flinkstate.benchmarks.scenario.remote.RemoteReadRun;
import io.github.flinkstate.benchmarks.scenario.remote.RemoteReadSettings;
import io.github.flinkstate.benchmarks.scenario.remote.RemoteReadTable;
import io.github.flinkstate.benchmarks.scenario.remote.RemoteReadTarget;
import java.io.File;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The remote read scenario on a tiny state: each backend loads, checkpoints, restores from the
 * remote file system and serves checked gets (a wrong value fails the run); the derived figures
 * (steady throughput, time to 90%) follow their definitions. No timing assertions.
 */
class RemoteReadScenarioTest {

    @TempDir File tmp;

    @ParameterizedTest
    @CsvSource({"disaggregated, 100", "forst, 50", "rocksdb, 0"})
    void restoresFromTheRemoteCheckpoint_andEveryGetReadsItsValue(String backend, int percent)
            throws Exception {
        RemoteReadSettings settings =
                new RemoteReadSettings(5_000, 64, 1, 100, 8L << 20, 8, 1000, "zipf", 7, 2_000);
        // 8 s: the restore, counted in the first buckets, may take seconds on a loaded machine
        RemoteReadResult r =
                new RemoteReadRun(settings).run(new RemoteReadTarget(backend, percent), 1, tmp);

        assertThat(r.backend()).isEqualTo(backend);
        assertThat(r.stateBytes()).isPositive();
        assertThat(r.bucketGets()).hasSize(8);
        assertThat(r.bucketGets().stream().mapToLong(Long::longValue).sum()).isPositive();
        assertThat(r.firstGetMillis()).isGreaterThanOrEqualTo(r.restoreMillis());
        assertThat(r.primaryReads()).as("the restore read the remote checkpoint").isPositive();
        assertThat(r.bucketPrimaryReads()).hasSize(8);
        assertThat(r.bucketPrimaryReads().stream().mapToLong(Long::longValue).sum())
                .isPositive()
                .isLessThanOrEqualTo(r.primaryReads());
    }

    @Test
    void steadyIsTheMedianOfTheLastBuckets_andTheTimeTo90PercentIsAWindowsEnd() {
        RemoteReadResult r =
                result(List.of(0L, 10L, 10L, 20L, 90L, 100L, 100L, 100L, 110L, 100L), 500);
        // last 30% of 10 buckets: 100, 110, 100 -> median 100 per 500 ms = 200 gets/s
        assertThat(r.steadyOpsPerSecond()).isEqualTo(200.0);
        // one-second windows (2 buckets): (90 + 100) / 1 s = 190 >= 180 first at bucket 5's end
        assertThat(r.millisToReach(0.9)).isEqualTo(3_000);
        assertThat(r.meanOpsPerSecond(1)).isEqualTo(10.0);
        assertThat(result(List.of(5L, 5L, 5L, 500L), 1000).millisToReach(0.9)).isEqualTo(4_000);
        assertThat(result(List.of(0L, 0L, 0L, 0L), 1000).millisToReach(0.9)).isEqualTo(1_000);
    }

    @Test
    void tableReportsOursAgainstForStPerRound() {
        List<RemoteReadResult> runs =
                List.of(
                        named("disaggregated", 10, 1, 300),
                        named("forst", 10, 1, 100),
                        named("rocksdb", 0, 1, 600),
                        named("disaggregated", 10, 2, 200),
                        named("forst", 10, 2, 100),
                        named("rocksdb", 0, 2, 400));
        String md = RemoteReadTable.markdown(runs, "t");
        assertThat(md).contains("| uniform | disaggregated 10% | 2 | 500 (400-600) |");
        assertThat(md).contains("| uniform | disaggregated 10% | 2.50x (2.00-3.00) |");
        assertThat(md).contains("0.50x (0.50-0.50) |");
    }

    /**
     * Each of our configurations at one budget (here with and without the cache hint) is compared
     * with ForSt on its own: the rows used to pool the rounds of every configuration at the budget.
     */
    @Test
    void tableComparesEachOfOurConfigurationsWithForStOnItsOwn() {
        List<RemoteReadResult> runs = new java.util.ArrayList<>();
        for (int round = 1; round <= 2; round++) {
            runs.add(named(new RemoteReadTarget("disaggregated", 10, true, true), round, 300));
            runs.add(named(new RemoteReadTarget("disaggregated", 10, true, false), round, 100));
            runs.add(named(new RemoteReadTarget("forst", 10), round, 100));
        }
        String md = RemoteReadTable.markdown(runs, "t");
        assertThat(md).contains("| uniform | disaggregated 10% | 3.00x (3.00-3.00) |");
        assertThat(md).contains("| uniform | disaggregated 10% (no hint) | 1.00x (1.00-1.00) |");
    }

    @Test
    void badSettingsAreRefused() {
        assertThatThrownBy(() -> new RemoteReadTarget("hashmap", 10))
                .hasMessageContaining("disaggregated, forst or rocksdb");
        assertThatThrownBy(() -> new RemoteReadSettings(10, 4, 1, 1, 1, 1, 250, "uniform", 1, 0))
                .hasMessageContaining("value bytes");
    }

    private static RemoteReadResult named(String backend, int percent, int round, long perBucket) {
        return named(new RemoteReadTarget(backend, percent), round, perBucket);
    }

    private static RemoteReadResult named(RemoteReadTarget target, int round, long perBucket) {
        return new RemoteReadResult(
                target.label(),
                target.backend(),
                target.cachePercent(),
                "uniform",
                round,
                1,
                1,
                1,
                500,
                List.of(perBucket, perBucket, perBucket, perBucket),
                List.of(0L, 0L, 0L, 0L),
                0,
                0);
    }

    private static RemoteReadResult result(List<Long> buckets, int bucketMillis) {
        return new RemoteReadResult(
                "x",
                "disaggregated",
                10,
                "uniform",
                1,
                1,
                1,
                1,
                bucketMillis,
                buckets,
                buckets.stream().map(b -> 0L).toList(),
                0,
                0);
    }
}
