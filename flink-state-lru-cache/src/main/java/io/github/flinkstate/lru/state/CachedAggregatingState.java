package io.github.flinkstate.lru.state;

import java.util.Collection;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.internal.InternalAggregatingState;

/**
 * Cached {@link InternalAggregatingState}: the accumulator lives in one cache entry; the aggregate
 * function runs on the cached accumulator. Thread safety: task thread only.
 */
public final class CachedAggregatingState<K, N, IN, ACC, OUT>
        extends AbstractCachedSingleValueState<
                K, N, ACC, InternalAggregatingState<K, N, IN, ACC, OUT>>
        implements InternalAggregatingState<K, N, IN, ACC, OUT> {

    private AggregateFunction<IN, ACC, OUT> aggregateFunction;

    public CachedAggregatingState(
            CacheContext<K> context,
            AggregatingStateDescriptor<IN, ACC, OUT> descriptor,
            InternalAggregatingState<K, N, IN, ACC, OUT> delegate,
            TypeSerializer<N> namespaceSerializer) {
        super(
                context,
                StateDescriptor.Type.AGGREGATING,
                descriptor.getName(),
                delegate,
                namespaceSerializer,
                delegate.getValueSerializer());
        this.aggregateFunction = descriptor.getAggregateFunction();
    }

    @Override
    @SuppressWarnings("unchecked")
    protected void onRebind(StateDescriptor<?, ?> newDescriptor) {
        this.aggregateFunction =
                ((AggregatingStateDescriptor<IN, ACC, OUT>) newDescriptor).getAggregateFunction();
    }

    @Override
    protected ACC loadFromDelegate() throws Exception {
        return delegateForCurrentKey().getInternal();
    }

    @Override
    public OUT get() throws Exception {
        ACC acc = getCachedValue();
        return acc == null ? null : aggregateFunction.getResult(acc);
    }

    @Override
    public void add(IN value) throws Exception {
        if (value == null) {
            addNullInDelegate();
            return;
        }
        ACC acc = getCachedValue();
        if (acc == null) {
            acc = aggregateFunction.createAccumulator();
        }
        putCachedValue(aggregateFunction.add(value, acc));
    }

    @Override
    public ACC getInternal() throws Exception {
        return getCachedValue();
    }

    @Override
    public void updateInternal(ACC valueToStore) throws Exception {
        putCachedValue(copyForWrite(valueToStore, valueSerializer));
    }

    @Override
    public void mergeNamespaces(N target, Collection<N> sources) throws Exception {
        mergeInDelegate(target, sources);
    }
}
