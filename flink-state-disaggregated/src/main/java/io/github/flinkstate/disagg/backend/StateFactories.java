package io.github.flinkstate.disagg.backend;

import io.github.flinkstate.disagg.backend.state.DisaggAggregatingState;
import io.github.flinkstate.disagg.backend.state.DisaggListState;
import io.github.flinkstate.disagg.backend.state.DisaggMapState;
import io.github.flinkstate.disagg.backend.state.DisaggReducingState;
import io.github.flinkstate.disagg.backend.state.DisaggValueState;
import java.util.EnumMap;
import java.util.Map;
import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.State;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.util.FlinkRuntimeException;

/**
 * Creates the state object for each {@link StateDescriptor.Type} (one table instead of a switch).
 *
 * <p>Thread safety: stateless.
 */
final class StateFactories<K> {

    @FunctionalInterface
    private interface Factory<K> {
        State create(StateDescriptor<?, ?> desc, StateAccess<K> backend, RegisteredKvState info);
    }

    private final Map<StateDescriptor.Type, Factory<K>> factories =
            new EnumMap<>(StateDescriptor.Type.class);

    @SuppressWarnings({"unchecked", "rawtypes"})
    StateFactories() {
        factories.put(StateDescriptor.Type.VALUE, (d, b, i) -> new DisaggValueState<>(b, i));
        factories.put(StateDescriptor.Type.LIST, (d, b, i) -> new DisaggListState<>(b, i));
        factories.put(StateDescriptor.Type.MAP, (d, b, i) -> new DisaggMapState<>(b, i));
        factories.put(
                StateDescriptor.Type.REDUCING,
                (d, b, i) ->
                        new DisaggReducingState<>(
                                b, i, ((ReducingStateDescriptor) d).getReduceFunction()));
        factories.put(
                StateDescriptor.Type.AGGREGATING,
                (d, b, i) ->
                        new DisaggAggregatingState<>(
                                b, i, ((AggregatingStateDescriptor) d).getAggregateFunction()));
    }

    State create(StateDescriptor<?, ?> desc, StateAccess<K> backend, RegisteredKvState info) {
        Factory<K> f = factories.get(desc.getType());
        if (f == null) {
            throw new FlinkRuntimeException(
                    "State "
                            + desc.getName()
                            + " of type "
                            + desc.getType()
                            + " is not supported by the disaggregated backend");
        }
        return f.create(desc, backend, info);
    }
}
