package io.github.flinkstate.disagg.backend.state;

import io.github.flinkstate.disagg.backend.RegisteredKvState;
import io.github.flinkstate.disagg.backend.StateAccess;
import java.io.IOException;
import org.apache.flink.runtime.state.internal.InternalValueState;

/** {@code ValueState}: one engine entry per (key, namespace). Thread safety: task thread only. */
public final class DisaggValueState<K, N, V> extends AbstractSingleValueState<K, N, V>
        implements InternalValueState<K, N, V> {

    private V defaultValue;

    public DisaggValueState(StateAccess<K> backend, RegisteredKvState info) {
        super(backend, info);
    }

    /** The descriptor's (deprecated) default value, returned as a copy when no value is set. */
    public void setDefaultValue(V defaultValue) {
        this.defaultValue = defaultValue;
    }

    @Override
    public V value() throws IOException {
        V v = read(prefix());
        if (v == null && defaultValue != null) {
            return getValueSerializer().copy(defaultValue);
        }
        return v;
    }

    @Override
    public void update(V value) throws IOException {
        if (value == null) {
            clear();
        } else {
            write(prefix(), value);
        }
    }
}
