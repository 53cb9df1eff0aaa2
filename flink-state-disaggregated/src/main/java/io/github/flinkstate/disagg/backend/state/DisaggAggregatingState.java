package io.github.flinkstate.disagg.backend.state;

import io.github.flinkstate.disagg.backend.RegisteredKvState;
import io.github.flinkstate.disagg.backend.StateAccess;
import java.util.Collection;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.runtime.state.internal.InternalAggregatingState;

/** {@code AggregatingState}: the accumulator as one entry. Thread safety: task thread only. */
public final class DisaggAggregatingState<K, N, IN, ACC, OUT>
        extends AbstractSingleValueState<K, N, ACC>
        implements InternalAggregatingState<K, N, IN, ACC, OUT> {

    private AggregateFunction<IN, ACC, OUT> function;

    public DisaggAggregatingState(
            StateAccess<K> backend,
            RegisteredKvState info,
            AggregateFunction<IN, ACC, OUT> function) {
        super(backend, info);
        this.function = function;
    }

    public void setAggregateFunction(AggregateFunction<IN, ACC, OUT> function) {
        this.function = function;
    }

    @Override
    public OUT get() throws Exception {
        ACC acc = read(prefix());
        return acc == null ? null : function.getResult(acc);
    }

    @Override
    public void add(IN value) throws Exception {
        byte[] p = prefix();
        ACC acc = read(p);
        write(p, function.add(value, acc == null ? function.createAccumulator() : acc));
    }

    @Override
    public void mergeNamespaces(N target, Collection<N> sources) throws Exception {
        mergeInto(target, sources, function::merge);
    }
}
