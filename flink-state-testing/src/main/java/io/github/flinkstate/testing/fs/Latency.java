package io.github.flinkstate.testing.fs;

import java.time.Duration;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A latency distribution for one {@link FsOp}: fixed, or log-normal around a median, optionally
 * with a tail (a fraction of the calls take a fixed long time instead), e.g. "5 ms median, 1% at 1
 * s" is {@code Latency.logNormal(Duration.ofMillis(5), 0.5).withTail(0.01, Duration.ofSeconds(1))}.
 *
 * <p>Samples are drawn from the {@link Random} the file system passes in (seeded there), so a run
 * is reproducible up to thread interleaving. Immutable apart from the count of tail samples.
 *
 * <p>Thread safety: thread-safe.
 */
public final class Latency {

    private final long medianNanos;
    private final double sigma;
    private final double tailFraction;
    private final long tailNanos;
    private final AtomicLong tailSamples = new AtomicLong();

    private Latency(long medianNanos, double sigma, double tailFraction, long tailNanos) {
        if (medianNanos < 0 || sigma < 0 || tailFraction < 0 || tailFraction > 1 || tailNanos < 0) {
            throw new IllegalArgumentException(
                    "latency parameters must be non-negative and the tail fraction in [0, 1]");
        }
        this.medianNanos = medianNanos;
        this.sigma = sigma;
        this.tailFraction = tailFraction;
        this.tailNanos = tailNanos;
    }

    /** No delay. */
    public static Latency none() {
        return new Latency(0, 0, 0, 0);
    }

    /** Every call takes exactly {@code delay}. */
    public static Latency fixed(Duration delay) {
        return new Latency(delay.toNanos(), 0, 0, 0);
    }

    /**
     * {@code median * exp(sigma * N(0,1))}: half of the calls are faster than {@code median}; sigma
     * 0.5 puts the 99th percentile at about 3.2x the median.
     */
    public static Latency logNormal(Duration median, double sigma) {
        return new Latency(median.toNanos(), sigma, 0, 0);
    }

    /** This distribution, but a {@code fraction} of the calls take {@code tail} instead. */
    public Latency withTail(double fraction, Duration tail) {
        return new Latency(medianNanos, sigma, fraction, tail.toNanos());
    }

    /** Draws one delay in nanoseconds. */
    public long sampleNanos(Random random) {
        if (tailFraction > 0 && random.nextDouble() < tailFraction) {
            tailSamples.incrementAndGet();
            return tailNanos;
        }
        if (sigma == 0) {
            return medianNanos;
        }
        return Math.round(medianNanos * Math.exp(sigma * random.nextGaussian()));
    }

    /** How many samples so far were tail samples. */
    public long tailSamples() {
        return tailSamples.get();
    }

    @Override
    public String toString() {
        return String.format(
                "Latency[median=%.3f ms, sigma=%.2f, tail=%.4f at %.3f ms]",
                medianNanos / 1e6, sigma, tailFraction, tailNanos / 1e6);
    }
}
