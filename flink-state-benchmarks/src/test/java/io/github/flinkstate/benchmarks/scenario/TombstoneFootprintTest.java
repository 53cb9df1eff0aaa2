package io.github.flinkstate.benchmarks.scenario;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The tombstone runner writes its lists and replacements and reports the live files' tombstones (no
 * throughput assertions). With every replacement on a list that never existed, compaction leaves
 * none of their tombstones behind but for bloom false positives.
 */
class TombstoneFootprintTest {

    @Test
    void writesAndReports() throws Exception {
        TombstoneFootprint.Result r = TombstoneFootprint.measure(20_000, 20_000, 1.0, 1, 4);
        for (TombstoneFootprint.Footprint f :
                new TombstoneFootprint.Footprint[] {r.atEnd(), r.settled()}) {
            assertThat(f.manifestBytes()).isPositive();
            assertThat(f.tombstones()).isBetween(0L, 20_000L); // one per replacement at most
        }
        assertThat(r.toString()).contains("prefix tombstones", "once compaction is idle");
    }
}
