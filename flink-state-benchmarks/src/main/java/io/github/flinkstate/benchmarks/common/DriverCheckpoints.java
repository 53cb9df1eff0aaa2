package io.github.flinkstate.benchmarks.common;

/**
 * The checkpoint interval of scenario jobs whose checkpoints the driver triggers itself. Flink
 * keeps checkpointing enabled with it, but starts the periodic timer after a random delay between
 * the minimum pause and the interval: with an interval of one hour and no pause, a periodic
 * checkpoint lands inside a run of a few seconds about once in a thousand runs (overlapping a
 * measured one, or subsuming a retained checkpoint the driver restores from). With a year it does
 * not in practice. Stateless.
 */
public final class DriverCheckpoints {

    /** {@code execution.checkpointing.interval} for driver-triggered checkpoints only. */
    public static final String INTERVAL = "365 d";

    private DriverCheckpoints() {}
}
