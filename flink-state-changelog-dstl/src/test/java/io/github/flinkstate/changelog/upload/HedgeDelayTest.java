package io.github.flinkstate.changelog.upload;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The hedging delay learnt from recent attempts: percentile, bounds, size classes, and the warm-up
 * (before any attempt: the initial delay; before enough comparable attempts: a wider multiple of
 * the median of attempts of any size, scaled up to the image's size).
 */
class HedgeDelayTest {

    private static final Duration MIN = Duration.ofMillis(50);
    private static final Duration INITIAL = Duration.ofMillis(250);
    private static final Duration MAX = Duration.ofSeconds(1);
    private static final long MB = 1024 * 1024;

    private static long ms(long millis) {
        return Duration.ofMillis(millis).toNanos();
    }

    @Test
    void beforeAnyAttempt_theInitialDelayApplies() {
        HedgeDelay delay = new HedgeDelay(true, MIN, INITIAL, MAX);
        assertThat(delay.forImage(MB)).isEqualTo(INITIAL);
        assertThat(delay.forImage(64 * MB)).isEqualTo(INITIAL);
        assertThat(delay.lastDelayMillis()).isEqualTo(250);
    }

    @Test
    void initialDelay_isBoundedByMinAndMax() {
        assertThat(new HedgeDelay(true, MIN, Duration.ofMillis(1), MAX).forImage(MB))
                .isEqualTo(MIN);
        assertThat(new HedgeDelay(true, MIN, Duration.ofHours(1), MAX).forImage(MB)).isEqualTo(MAX);
    }

    @Test
    void warmUp_learnsFromAttemptsOfAnySize_scaledUpToTheImage() {
        HedgeDelay delay = new HedgeDelay(true, MIN, INITIAL, MAX);
        delay.record(ms(20), MB);
        // one attempt: the warm-up factor times its duration
        assertThat(delay.forImage(MB)).isEqualTo(Duration.ofMillis(20 * 6));
        // a larger image: scaled by the size ratio (4 MiB / 1 MiB), not compared only
        assertThat(delay.forImage(4 * MB)).isEqualTo(Duration.ofMillis(20 * 6 * 4));
        assertThat(delay.forImage(16 * MB)).isEqualTo(MAX);
        // a smaller image: never scaled down (a smaller write is not assumed faster)
        assertThat(delay.forImage(1024)).isEqualTo(Duration.ofMillis(20 * 6));
        // the lower median of the attempts seen so far counts
        delay.record(ms(30), 2 * MB);
        assertThat(delay.forImage(MB)).isEqualTo(Duration.ofMillis(20 * 6));
        delay.record(ms(40), MB);
        assertThat(delay.forImage(MB)).isEqualTo(Duration.ofMillis(30 * 6));
    }

    @Test
    void warmUp_oneTailAttemptDoesNotHoldTheDelayAtTheTimeout() {
        HedgeDelay delay = new HedgeDelay(true, MIN, INITIAL, MAX);
        delay.record(ms(20), MB);
        delay.record(ms(1000), MB); // e.g. a hedge's loser that met the tail
        assertThat(delay.forImage(MB)).isEqualTo(Duration.ofMillis(20 * 6));
        delay.record(ms(1000), MB); // most attempts slow: the delay follows them
        assertThat(delay.forImage(MB)).isEqualTo(MAX);
    }

    @Test
    void untilEnoughComparableAttempts_theWarmUpDelayApplies_thenThePercentile() {
        HedgeDelay delay = new HedgeDelay(true, Duration.ofMillis(1), INITIAL, MAX);
        for (int i = 0; i < HedgeDelay.MIN_COMPARABLE - 1; i++) {
            delay.record(ms(10), MB);
        }
        assertThat(delay.forImage(MB)).isEqualTo(Duration.ofMillis(60));
        delay.record(ms(10), MB);
        assertThat(delay.forImage(MB)).isEqualTo(Duration.ofMillis(30));
    }

    @Test
    void delayIsThreeTimesThe90thPercentile_withinTheBounds() {
        HedgeDelay delay = new HedgeDelay(true, MIN, INITIAL, MAX);
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
        HedgeDelay delay = new HedgeDelay(true, MIN, INITIAL, MAX);
        for (int i = 0; i < 20; i++) {
            delay.record(ms(100), 64 * MB);
            delay.record(ms(5), 1024); // small writes: one size class below 256 KiB
        }
        assertThat(delay.forImage(64 * MB)).isEqualTo(Duration.ofMillis(300));
        assertThat(delay.forImage(100)).isEqualTo(MIN);
        assertThat(delay.forImage(200 * 1024)).isEqualTo(MIN);
        // nothing comparable seen yet: warm-up over all attempts, 1 KiB ones scaled to 4 MiB as
        // 256 KiB (80 ms), 64 MiB ones not scaled down (100 ms): 6 x the lower median, 80 ms
        assertThat(delay.forImage(4 * MB)).isEqualTo(Duration.ofMillis(480));
    }

    @Test
    void notAdaptive_alwaysTheTimeout() {
        HedgeDelay delay = new HedgeDelay(false, MIN, INITIAL, MAX);
        assertThat(delay.forImage(MB)).isEqualTo(MAX);
        for (int i = 0; i < 100; i++) {
            delay.record(ms(5), MB);
        }
        assertThat(delay.forImage(MB)).isEqualTo(MAX);
    }
}
