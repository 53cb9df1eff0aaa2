package io.github.flinkstate.lru.restore;

import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.ListSerializer;
import org.apache.flink.api.common.typeutils.base.MapSerializer;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.RegisteredKeyValueStateBackendMetaInfo;
import org.apache.flink.runtime.state.StateSnapshotTransformer.StateSnapshotTransformFactory;
import org.apache.flink.runtime.state.internal.InternalKvState;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;

/**
 * A delegate state that restored cache entries are written into, registered under the snapshot's
 * own serializers. Registration uses {@code allowFutureMetadataUpdates = true}, so the job can
 * later register the same state with its own (compatible) descriptor.
 *
 * <p>Immutable; used on the restoring thread.
 */
final class RestoredStateTarget {

    final StateDescriptor.Type type;
    final InternalKvState<?, ?, ?> state;
    final TypeSerializer<Object> namespaceSerializer;
    final TypeSerializer<Object> valueSerializer;
    final TypeSerializer<Object> userKeySerializer;
    final TypeSerializer<Object> userValueSerializer;

    @SuppressWarnings({"unchecked", "rawtypes"})
    RestoredStateTarget(AbstractKeyedStateBackend<?> delegate, StateMetaInfoSnapshot snapshot)
            throws Exception {
        RegisteredKeyValueStateBackendMetaInfo<Object, Object> meta =
                new RegisteredKeyValueStateBackendMetaInfo<>(snapshot);
        this.type = meta.getStateType();
        this.namespaceSerializer = meta.getNamespaceSerializer();
        this.valueSerializer = meta.getStateSerializer();
        String name = meta.getName();
        StateDescriptor descriptor;
        TypeSerializer uk = null;
        TypeSerializer uv = null;
        switch (type) {
            case VALUE:
                descriptor = new ValueStateDescriptor<>(name, valueSerializer, null);
                break;
            case LIST:
                descriptor =
                        new ListStateDescriptor<>(
                                name, ((ListSerializer) valueSerializer).getElementSerializer());
                break;
            case MAP:
                MapSerializer map = (MapSerializer) valueSerializer;
                uk = map.getKeySerializer();
                uv = map.getValueSerializer();
                descriptor = new MapStateDescriptor<>(name, uk, uv);
                break;
            case REDUCING:
                descriptor =
                        new ReducingStateDescriptor<>(
                                name, RestoreOnlyFunctions.REDUCE, valueSerializer);
                break;
            case AGGREGATING:
                descriptor =
                        new AggregatingStateDescriptor<>(
                                name, RestoreOnlyFunctions.AGGREGATE, valueSerializer);
                break;
            default:
                throw new IllegalStateException(
                        "State "
                                + name
                                + " has type "
                                + type
                                + ", which the LRU cache cannot restore");
        }
        this.userKeySerializer = uk;
        this.userValueSerializer = uv;
        this.state =
                (InternalKvState<?, ?, ?>)
                        delegate.createOrUpdateInternalState(
                                namespaceSerializer,
                                descriptor,
                                StateSnapshotTransformFactory.noTransform(),
                                true);
    }
}
