package io.github.flinkstate.cluster.job;

import org.apache.flink.api.common.functions.AggregateFunction;

/** Count and sum of the records of a session; the accumulator is {@code {count, sum}}. */
final class CountSum implements AggregateFunction<Long, long[], long[]> {

    @Override
    public long[] createAccumulator() {
        return new long[2];
    }

    @Override
    public long[] add(Long record, long[] acc) {
        return new long[] {acc[0] + 1, acc[1] + record};
    }

    @Override
    public long[] getResult(long[] acc) {
        return acc;
    }

    @Override
    public long[] merge(long[] a, long[] b) {
        return new long[] {a[0] + b[0], a[1] + b[1]};
    }
}
