package io.github.flinkstate.benchmarks.scenario.changelog;

import org.apache.flink.api.common.functions.AggregateFunction;

/** The {@code window} workload's aggregate: records per window. */
final class WindowCount implements AggregateFunction<Long, Long, Long> {

    @Override
    public Long createAccumulator() {
        return 0L;
    }

    @Override
    public Long add(Long value, Long acc) {
        return acc + 1;
    }

    @Override
    public Long getResult(Long acc) {
        return acc;
    }

    @Override
    public Long merge(Long a, Long b) {
        return a + b;
    }
}
