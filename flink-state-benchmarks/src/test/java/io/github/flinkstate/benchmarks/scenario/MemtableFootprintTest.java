package io.github.flinkstate.benchmarks.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The footprint runner fills a memtable and reports what it charged (no heap assertions). */
class MemtableFootprintTest {

    @Test
    void fillsTheMemtable_andReportsItsCharge() throws Exception {
        MemtableFootprint.Result r = MemtableFootprint.measure(20_000, 16, 8);
        assertThat(r.entries()).isEqualTo(20_000);
        // at least the keys and values themselves
        assertThat(r.chargedBytes()).isGreaterThan(20_000L * 24);
        assertThat(r.toString()).contains("entries 20000", "B/entry");
    }

    @Test
    void keysShorterThanEightBytes_areRefused() {
        assertThatThrownBy(() -> MemtableFootprint.measure(10, 4, 8))
                .hasMessageContaining("key-bytes >= 8");
    }
}
