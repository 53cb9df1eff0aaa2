package io.github.flinkstate.disagg.backend.state;

import io.github.flinkstate.disagg.backend.RegisteredKvState;
import io.github.flinkstate.disagg.backend.StateAccess;
import java.util.Collection;
import org.apache.flink.api.common.functions.ReduceFunction;
import org.apache.flink.runtime.state.internal.InternalReducingState;

/**
 * {@code ReducingState}: the reduced value as one entry; {@code add} is a read and a write. Thread
 * safety: task thread only.
 */
public final class DisaggReducingState<K, N, V> extends AbstractSingleValueState<K, N, V>
        implements InternalReducingState<K, N, V> {

    private ReduceFunction<V> reduceFunction;

    public DisaggReducingState(
            StateAccess<K> backend, RegisteredKvState info, ReduceFunction<V> reduceFunction) {
        super(backend, info);
        this.reduceFunction = reduceFunction;
    }

    public void setReduceFunction(ReduceFunction<V> reduceFunction) {
        this.reduceFunction = reduceFunction;
    }

    @Override
    public V get() throws Exception {
        return read(prefix());
    }

    @Override
    public void add(V value) throws Exception {
        if (value == null) {
            return;
        }
        byte[] p = prefix();
        V old = read(p);
        write(p, old == null ? value : reduceFunction.reduce(old, value));
    }

    @Override
    public void mergeNamespaces(N target, Collection<N> sources) throws Exception {
        mergeInto(target, sources, reduceFunction::reduce);
    }
}
