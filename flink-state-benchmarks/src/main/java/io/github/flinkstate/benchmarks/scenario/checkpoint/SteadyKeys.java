package io.github.flinkstate.benchmarks.scenario.checkpoint;

import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.util.Collector;

/**
 * Filter behind an unbounded sequence source (parallelism 1): passes ids {@code 0 .. keys-1}
 * through as fast as the job takes them (the load), then turns every further id into an update of a
 * pseudo-random existing key, at most {@code updatesPerSecond} of them (the steady state whose
 * checkpoints are measured).
 *
 * <p>Not thread-safe; one instance per subtask, which runs on one thread.
 */
final class SteadyKeys implements FlatMapFunction<Long, Long> {

    private final long keys;
    private final int updatesPerSecond;
    private transient long steadySinceNanos;
    private transient long updates;

    SteadyKeys(long keys, int updatesPerSecond) {
        this.keys = keys;
        this.updatesPerSecond = updatesPerSecond;
    }

    @Override
    public void flatMap(Long id, Collector<Long> out) throws InterruptedException {
        if (id < keys) {
            out.collect(id);
            return;
        }
        if (updates == 0) {
            steadySinceNanos = System.nanoTime();
        }
        long allowed = (System.nanoTime() - steadySinceNanos) * updatesPerSecond / 1_000_000_000L;
        if (updates >= allowed) {
            Thread.sleep(1);
        }
        updates++;
        out.collect(Math.floorMod(mix(id), keys));
    }

    /** A bijective 64-bit mix (SplitMix64's finalizer), so updates spread over all keys. */
    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
