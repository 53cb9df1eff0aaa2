package io.github.flinkstate.benchmarks.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/** The no-overhead mix that the FLIP-325 scenario reports next to each cache run. */
class Flip325ScenarioTest {

    @Test
    void theMixIsRocksDbWithoutHits_hashMapWithOnlyHits_andTheHarmonicBlendBetween() {
        assertThat(Flip325Scenario.noOverheadMix(0.0, 200_000, 4_000_000))
                .isCloseTo(200_000, within(1e-6));
        assertThat(Flip325Scenario.noOverheadMix(1.0, 200_000, 4_000_000))
                .isCloseTo(4_000_000, within(1e-6));
        // half the records at 5 us and half at 0.25 us: 2.625 us per record on average
        assertThat(Flip325Scenario.noOverheadMix(0.5, 200_000, 4_000_000))
                .isCloseTo(1 / 2.625e-6, within(1.0));
    }

    @Test
    void withoutAHitRatioOrAPeerThereIsNoMix() {
        assertThat(Flip325Scenario.noOverheadMix(Double.NaN, 200_000, 4_000_000)).isNaN();
        assertThat(Flip325Scenario.noOverheadMix(0.5, Double.NaN, 4_000_000)).isNaN();
        assertThat(Flip325Scenario.noOverheadMix(0.5, 200_000, Double.NaN)).isNaN();
    }
}
