package io.github.flinkstate.lru.restore;

import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.functions.ReduceFunction;

/**
 * Placeholder functions for descriptors rebuilt from snapshot meta data. Restoring cached entries
 * only writes whole values into the delegate, so these are never called; the job's real functions
 * replace them when the job registers the state.
 */
final class RestoreOnlyFunctions {

    private RestoreOnlyFunctions() {}

    private static UnsupportedOperationException notForUse() {
        return new UnsupportedOperationException(
                "State restored from an LRU cache snapshot was used before the job registered it");
    }

    @SuppressWarnings("rawtypes")
    static final ReduceFunction REDUCE =
            (a, b) -> {
                throw notForUse();
            };

    @SuppressWarnings("rawtypes")
    static final AggregateFunction AGGREGATE =
            new AggregateFunction() {
                @Override
                public Object createAccumulator() {
                    throw notForUse();
                }

                @Override
                public Object add(Object value, Object accumulator) {
                    throw notForUse();
                }

                @Override
                public Object getResult(Object accumulator) {
                    throw notForUse();
                }

                @Override
                public Object merge(Object a, Object b) {
                    throw notForUse();
                }
            };
}
