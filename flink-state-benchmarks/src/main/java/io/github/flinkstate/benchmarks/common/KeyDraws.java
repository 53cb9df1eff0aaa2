package io.github.flinkstate.benchmarks.common;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Draws key indexes in {@code [0, keyCount)}: {@code uniform}, or {@code zipf} (rank r drawn with
 * probability proportional to 1/r). Zipf ranks are scattered over the key space by a fixed
 * permutation (a multiplier coprime to the key count), so hot keys spread over every file and block
 * instead of clustering at the start of the key order.
 *
 * <p>Thread safety: immutable after construction; each thread passes its own random source.
 */
public final class KeyDraws {

    private static final long SCATTER = 1_000_003L;

    private final int keyCount;
    private final double[] zipfCdf; // null: uniform

    private KeyDraws(int keyCount, double[] zipfCdf) {
        this.keyCount = keyCount;
        this.zipfCdf = zipfCdf;
    }

    /**
     * @param distribution {@code uniform} or {@code zipf}
     * @throws IllegalArgumentException for another distribution, a key count below 1, or a zipf key
     *     count that is a multiple of the scatter multiplier
     */
    public static KeyDraws of(String distribution, int keyCount) {
        if (keyCount < 1) {
            throw new IllegalArgumentException("keyCount must be >= 1: " + keyCount);
        }
        if (distribution.equals("uniform")) {
            return new KeyDraws(keyCount, null);
        }
        if (!distribution.equals("zipf")) {
            throw new IllegalArgumentException(
                    "keys must be uniform or zipf, was '" + distribution + "'");
        }
        if (keyCount % SCATTER == 0) {
            throw new IllegalArgumentException(
                    "zipf keyCount must not be a multiple of " + SCATTER);
        }
        double[] cdf = new double[keyCount];
        double sum = 0;
        for (int r = 0; r < keyCount; r++) {
            sum += 1.0 / (r + 1);
            cdf[r] = sum;
        }
        for (int r = 0; r < keyCount; r++) {
            cdf[r] /= sum;
        }
        return new KeyDraws(keyCount, cdf);
    }

    /** The next key index. */
    public int next(SplittableRandom random) {
        if (zipfCdf == null) {
            return random.nextInt(keyCount);
        }
        int rank = Arrays.binarySearch(zipfCdf, random.nextDouble());
        rank = rank >= 0 ? rank : Math.min(-rank - 1, keyCount - 1);
        return (int) (((long) rank * SCATTER) % keyCount);
    }
}
