package io.github.flinkstate.lru.state;

import java.io.IOException;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.internal.InternalValueState;

/**
 * Cached {@link InternalValueState}: reads and writes go to the LRU cache; misses load from the
 * delegate's value state. Thread safety: task thread only.
 */
public final class CachedValueState<K, N, V>
        extends AbstractCachedSingleValueState<K, N, V, InternalValueState<K, N, V>>
        implements InternalValueState<K, N, V> {

    private V defaultValue;

    public CachedValueState(
            CacheContext<K> context,
            ValueStateDescriptor<V> descriptor,
            InternalValueState<K, N, V> delegate,
            TypeSerializer<N> namespaceSerializer) {
        super(
                context,
                StateDescriptor.Type.VALUE,
                descriptor.getName(),
                delegate,
                namespaceSerializer,
                delegate.getValueSerializer());
        this.defaultValue = descriptor.getDefaultValue();
    }

    @Override
    @SuppressWarnings("unchecked")
    protected void onRebind(StateDescriptor<?, ?> newDescriptor) {
        this.defaultValue = ((ValueStateDescriptor<V>) newDescriptor).getDefaultValue();
    }

    @Override
    protected V loadFromDelegate() throws IOException {
        return delegateForCurrentKey().value();
    }

    @Override
    public V value() throws IOException {
        try {
            V v = getCachedValue();
            if (v != null) {
                return v;
            }
            return defaultValue == null ? null : valueSerializer.copy(defaultValue);
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IOException("Error while reading value state " + name, e);
        }
    }

    @Override
    public void update(V value) throws IOException {
        if (value == null) {
            clear();
            return;
        }
        try {
            putCachedValue(copyForWrite(value, valueSerializer));
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IOException("Error while updating value state " + name, e);
        }
    }
}
