package io.github.flinkstate.lru.state;

import java.util.Collection;
import org.apache.flink.api.common.functions.ReduceFunction;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.internal.InternalReducingState;

/**
 * Cached {@link InternalReducingState}: the reduced value lives in one cache entry; the reduce
 * function runs on the cached value. Thread safety: task thread only.
 */
public final class CachedReducingState<K, N, V>
        extends AbstractCachedSingleValueState<K, N, V, InternalReducingState<K, N, V>>
        implements InternalReducingState<K, N, V> {

    private ReduceFunction<V> reduceFunction;

    public CachedReducingState(
            CacheContext<K> context,
            ReducingStateDescriptor<V> descriptor,
            InternalReducingState<K, N, V> delegate,
            TypeSerializer<N> namespaceSerializer) {
        super(
                context,
                StateDescriptor.Type.REDUCING,
                descriptor.getName(),
                delegate,
                namespaceSerializer,
                delegate.getValueSerializer());
        this.reduceFunction = descriptor.getReduceFunction();
    }

    @Override
    @SuppressWarnings("unchecked")
    protected void onRebind(StateDescriptor<?, ?> newDescriptor) {
        this.reduceFunction = ((ReducingStateDescriptor<V>) newDescriptor).getReduceFunction();
    }

    @Override
    protected V loadFromDelegate() throws Exception {
        return delegateForCurrentKey().getInternal();
    }

    @Override
    public V get() throws Exception {
        return getCachedValue();
    }

    @Override
    public void add(V value) throws Exception {
        if (value == null) {
            addNullInDelegate();
            return;
        }
        V current = getCachedValue();
        // the reduce function may return its argument: copy it first when asked to
        V input = copyForWrite(value, valueSerializer);
        putCachedValue(current == null ? input : reduceFunction.reduce(current, input));
    }

    @Override
    public V getInternal() throws Exception {
        return getCachedValue();
    }

    @Override
    public void updateInternal(V valueToStore) throws Exception {
        putCachedValue(copyForWrite(valueToStore, valueSerializer));
    }

    @Override
    public void mergeNamespaces(N target, Collection<N> sources) throws Exception {
        mergeInDelegate(target, sources);
    }
}
