package io.github.flinkstate.changelog.upload;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The hedging delay learnt from recent attempts: percentile, bounds, size classes, warm-up. */
class HedgeDelayTest {

    private static final Duration MIN = Duration.ofMillis(50);
    private static final Duration MAX = Duration.ofSeconds(1);
    private static final long MB = 1024 * 1024;

    private static long ms(long millis) {
        return Duration.ofMillis(millis).toNanos();
    }

    @Test
    void untilEnoughComparableAttempts_theTimeoutApplies() {
        HedgeDelay delay = new HedgeDelay(true, MIN, MAX);
        for (int i = 0; i < HedgeDelay.MIN_COMPARABLE - 1; i++) {
            delay.record(ms(5), MB);
        }
        assertThat(delay.forImage(MB)).isEqualTo(MAX);
        delay.record(ms(5), MB);
        assertThat(delay.forImage(MB)).isEqualTo(MIN);
    }

    @Test
    void delayIsThreeTimesThe90thPercentile_withinTheBounds() {
        HedgeDelay delay = new HedgeDelay(true, MIN, MAX);
        for (int i = 1; i <= 100; i++) {
            delay.record(ms(i), MB); // 1..100 ms: p90 = 90 ms
        }
        assertThat(delay.forImage(MB)).isEqualTo(Duration.ofMillis(270));
        assertThat(delay.lastDelayMillis()).isEqualTo(270);
        for (int i = 0; i < HedgeDelay.SAMPLES; i++) {
            delay.record(ms(900), MB); // the window forgets the older attempts
        }
        assertThat(delay.forImage(MB)).isEqualTo(MAX);
    }

    @Test
    void onlyAttemptsOfASimilarSizeCount() {
        HedgeDelay delay = new HedgeDelay(true, MIN, MAX);
        for (int i = 0; i < 20; i++) {
            delay.record(ms(100), 64 * MB);
            delay.record(ms(5), 1024); // small writes: one size class below 256 KiB
        }
        assertThat(delay.forImage(64 * MB)).isEqualTo(Duration.ofMillis(300));
        assertThat(delay.forImage(100)).isEqualTo(MIN);
        assertThat(delay.forImage(200 * 1024)).isEqualTo(MIN);
        assertThat(delay.forImage(4 * MB)).isEqualTo(MAX); // nothing comparable seen yet
    }

    @Test
    void notAdaptive_alwaysTheTimeout() {
        HedgeDelay delay = new HedgeDelay(false, MIN, MAX);
        for (int i = 0; i < 100; i++) {
            delay.record(ms(5), MB);
        }
        assertThat(delay.forImage(MB)).isEqualTo(MAX);
    }
}
