package io.github.flinkstate.benchmarks.scenario.changelog;

import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import io.github.flinkstate.testing.fs.Latency;
import java.time.Duration;

/**
 * The simulated DFS of the changelog scenario: the test kit's {@link InjectingFileSystem} behind
 * {@code inject://} paths (the local disk), where closing an output stream (the upload) takes a
 * log-normal latency around a median (sigma 0.5) and, for a fraction of the uploads, a long tail
 * value instead. Reads, listings and deletes are not delayed. Immutable.
 *
 * @param medianMs median upload latency
 * @param tailMs latency of a tail upload
 * @param tailFraction fraction of uploads that take {@code tailMs}
 * @param seed mixed into each configuration's random sequence; a run's configurations see
 *     independent sequences, and runs with different seeds independent ones (with one fixed seed
 *     every run would put its tail uploads at the same upload numbers)
 */
public record DfsLatency(long medianMs, long tailMs, double tailFraction, long seed) {

    public DfsLatency(long medianMs, long tailMs, double tailFraction) {
        this(medianMs, tailMs, tailFraction, 0);
    }

    /**
     * Configures the shared {@code inject://} file system with this latency and clears its
     * counters; returns the latency, whose {@link Latency#tailSamples()} counts this run's tails.
     */
    public Latency install(long seed) {
        InjectingFileSystem fs = InjectingFileSystem.shared();
        fs.reset();
        fs.seed(seed);
        Latency upload =
                Latency.logNormal(Duration.ofMillis(medianMs), 0.5)
                        .withTail(tailFraction, Duration.ofMillis(tailMs));
        fs.latency(FsOp.CLOSE, upload);
        return upload;
    }
}
