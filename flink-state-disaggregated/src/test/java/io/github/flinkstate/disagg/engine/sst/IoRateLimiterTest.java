package io.github.flinkstate.disagg.engine.sst;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The token bucket of {@link IoRateLimiter}, on a fake clock that only moves when the limiter makes
 * a caller sleep (so every figure is exact, no assertion on time): the burst passes without a
 * sleep, a debt is slept off at the rate, idle time refills at most the burst, the bytes granted
 * never outrun {@code burst + rate * elapsed}, and shutdown stops pacing.
 */
@Timeout(60)
class IoRateLimiterTest {

    private static final long RATE = 1_000_000; // bytes per second
    private static final long SECOND = 1_000_000_000L;

    private final AtomicLong now = new AtomicLong(5 * SECOND);
    private final List<Long> sleeps = new ArrayList<>();

    private IoRateLimiter limiter(long rate) {
        return new IoRateLimiter(
                rate,
                now::get,
                (l, nanos) -> {
                    sleeps.add(nanos);
                    now.addAndGet(nanos);
                });
    }

    @Test
    void burstPassesThenADebtIsSleptOffAtTheRate() throws Exception {
        IoRateLimiter l = limiter(RATE);
        assertThat(l.burstBytes()).isEqualTo(RATE / 10);

        l.acquire(RATE / 10);
        assertThat(sleeps).as("the burst").isEmpty();

        l.acquire(500_000); // half a second's worth in debt
        assertThat(sleeps).containsExactly(SECOND / 2);
        assertThat(l.availableTokens()).isZero();

        l.acquire(1_000);
        assertThat(sleeps).containsExactly(SECOND / 2, SECOND / 1000);
        assertThat(l.grantedBytes()).isEqualTo(RATE / 10 + 500_000 + 1_000);
        assertThat(l.throttledRequests()).isEqualTo(2);
        assertThat(l.sleptNanos()).isEqualTo(SECOND / 2 + SECOND / 1000);
    }

    @Test
    void idleTimeRefillsAtMostTheBurst() throws Exception {
        IoRateLimiter l = limiter(RATE);
        l.acquire(RATE / 10);
        now.addAndGet(SECOND / 20); // half the burst back
        assertThat(l.availableTokens()).isEqualTo(RATE / 20);
        now.addAndGet(3600 * SECOND); // an hour idle: still one burst, no overflow
        assertThat(l.availableTokens()).isEqualTo(RATE / 10);
        l.acquire(RATE / 10);
        assertThat(sleeps).isEmpty();
    }

    @Test
    void smallBurstIsAtLeast64KiB() {
        assertThat(limiter(1000).burstBytes()).isEqualTo(64 << 10);
    }

    @Test
    void grantedBytesNeverOutrunBurstPlusRateTimesElapsed() throws Exception {
        long rate = 3_000_000;
        IoRateLimiter l = limiter(rate);
        long start = now.get();
        SplittableRandom random = new SplittableRandom(7);
        long granted = 0;
        long largest = 0;
        for (int i = 0; i < 10_000; i++) {
            if (random.nextInt(4) == 0) {
                now.addAndGet(random.nextLong(SECOND / 100)); // other work between requests
            }
            long bytes = 1 + random.nextLong(2 << 20);
            largest = Math.max(largest, bytes);
            l.acquire(bytes);
            granted += bytes;
            double elapsed = (now.get() - start) / (double) SECOND;
            assertThat((double) granted).isLessThanOrEqualTo(l.burstBytes() + rate * elapsed + 1);
        }
        assertThat(l.grantedBytes()).isEqualTo(granted);
        assertThat(largest).isGreaterThan(l.burstBytes());
    }

    @Test
    void pacingIsNotStricterThanAsked() throws Exception {
        IoRateLimiter l = limiter(RATE);
        long start = now.get();
        for (int i = 0; i < 100; i++) {
            l.acquire(123_457);
        }
        // back to back: the clock moved only by the sleeps, which paid exactly the debt beyond
        // the burst (each rounded up by at most a byte's time)
        long expected = (100 * 123_457L - RATE / 10) * (SECOND / RATE);
        assertThat(now.get() - start).isBetween(expected, expected + SECOND / 1000);
    }

    @Test
    void shutdown_wakesASleeperAndStopsPacing() throws Exception {
        IoRateLimiter l = new IoRateLimiter(64 << 10); // the real clock and sleeper
        l.acquire(64 << 10);
        Thread sleeper =
                new Thread(
                        () -> {
                            try {
                                l.acquire(1L << 30); // about 4.5 hours of debt
                            } catch (java.io.InterruptedIOException e) {
                                throw new IllegalStateException(e);
                            }
                        });
        sleeper.start();
        while (l.throttledRequests() == 0) {
            Thread.onSpinWait();
        }
        l.shutdown();
        sleeper.join(); // would hang for hours without the wake-up (the test's timeout fails it)
        l.acquire(1L << 30);
        assertThat(l.throttledRequests()).isEqualTo(1);
    }

    @Test
    void aPositiveRateIsRequired() {
        assertThatThrownBy(() -> new IoRateLimiter(0)).isInstanceOf(IllegalArgumentException.class);
    }
}
