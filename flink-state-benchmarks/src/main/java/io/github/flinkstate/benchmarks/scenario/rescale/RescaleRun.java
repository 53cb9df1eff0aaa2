package io.github.flinkstate.benchmarks.scenario.rescale;

/**
 * One restore of the matrix: which backend, which transition, which repeat, from which checkpoint,
 * and what was measured. Immutable.
 */
public record RescaleRun(
        String backend,
        Transition transition,
        int repeat,
        RetainedCheckpoint checkpoint,
        RestoreMeasurement measurement) {}
