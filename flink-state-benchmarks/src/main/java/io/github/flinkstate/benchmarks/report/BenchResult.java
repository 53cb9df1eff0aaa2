package io.github.flinkstate.benchmarks.report;

import java.util.Map;
import java.util.TreeMap;

/**
 * One measured figure in our common results format: which suite and benchmark, on which backend (or
 * engine), with which other parameters, and the score with its error and unit. Immutable.
 *
 * @param suite the benchmark class or scenario, e.g. {@code ValueStateBenchmark}, {@code flip325}
 * @param benchmark the operation, e.g. {@code valueGet}
 * @param backend the {@code backend} / {@code engine} parameter, e.g. {@code ROCKSDB}
 * @param params the remaining parameters (sorted by name)
 * @param score the primary score (higher is better for throughput units)
 * @param error JMH's 99.9% confidence half-width, or NaN when not computable (one iteration)
 * @param unit e.g. {@code ops/ms}, {@code records/s}
 */
public record BenchResult(
        String suite,
        String benchmark,
        String backend,
        Map<String, String> params,
        double score,
        double error,
        String unit) {

    public BenchResult {
        params = new TreeMap<>(params);
    }

    /** Suite and benchmark, e.g. {@code ValueStateBenchmark.valueGet}. */
    public String id() {
        return suite + "." + benchmark;
    }
}
