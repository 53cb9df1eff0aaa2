package io.github.flinkstate.benchmarks.scenario.rescale;

import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.util.Collector;

/**
 * Filter behind an unbounded sequence source (load and verify jobs): passes ids {@code 0 .. keys-1}
 * through once, then drops every further id after a 1 ms pause, so the job stays running (the load
 * job can take the retained checkpoint, the verify job does not finish and discard a claimed
 * checkpoint) without sending any more records. Stateless.
 */
final class FirstKeys implements FlatMapFunction<Long, Long> {

    private final long keys;

    FirstKeys(long keys) {
        this.keys = keys;
    }

    @Override
    public void flatMap(Long id, Collector<Long> out) throws InterruptedException {
        if (id < keys) {
            out.collect(id);
        } else {
            Thread.sleep(1);
        }
    }
}
