package io.github.flinkstate.lru.snapshot;

import io.github.flinkstate.lru.cow.CacheOwner;
import io.github.flinkstate.lru.state.AbstractCachedState;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.MapSerializer;
import org.apache.flink.runtime.state.StateSnapshotTransformer;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;

/**
 * The registered states as they were when a snapshot started: meta data, and duplicated serializers
 * that the asynchronous part may use on its own thread.
 *
 * <p>Immutable after construction (taken on the task thread, read by the snapshot thread).
 */
public final class SnapshotStates {

    /** One state's snapshot-time description. */
    public static final class Info {
        final int index;
        final StateDescriptor.Type type;
        final StateMetaInfoSnapshot metaInfo;
        final TypeSerializer<Object> namespaceSerializer;
        final TypeSerializer<Object> valueSerializer;
        final TypeSerializer<Object> userKeySerializer;
        final TypeSerializer<Object> userValueSerializer;

        /** TTL cleanup and similar; null if none. Applied per element for lists and maps. */
        final StateSnapshotTransformer<Object> transformer;

        @SuppressWarnings("unchecked")
        Info(int index, AbstractCachedState<?, ?, ?, ?> state) {
            this.index = index;
            this.type = state.type();
            this.metaInfo = state.metaInfoSnapshot();
            this.transformer = state.newSnapshotTransformer();
            this.namespaceSerializer =
                    (TypeSerializer<Object>) state.getNamespaceSerializer().duplicate();
            this.valueSerializer = (TypeSerializer<Object>) state.getValueSerializer().duplicate();
            if (type == StateDescriptor.Type.MAP) {
                MapSerializer<Object, Object> map =
                        (MapSerializer<Object, Object>) (TypeSerializer<?>) valueSerializer;
                this.userKeySerializer = map.getKeySerializer();
                this.userValueSerializer = map.getValueSerializer();
            } else {
                this.userKeySerializer = null;
                this.userValueSerializer = null;
            }
        }
    }

    private final TypeSerializer<Object> keySerializer;
    private final Map<CacheOwner, Info> byOwner = new IdentityHashMap<>();
    private final List<StateMetaInfoSnapshot> metaInfos = new ArrayList<>();

    @SuppressWarnings("unchecked")
    public SnapshotStates(
            TypeSerializer<?> keySerializer,
            Collection<? extends AbstractCachedState<?, ?, ?, ?>> states) {
        this.keySerializer = (TypeSerializer<Object>) keySerializer.duplicate();
        for (AbstractCachedState<?, ?, ?, ?> state : states) {
            Info info = new Info(metaInfos.size(), state);
            byOwner.put(state, info);
            metaInfos.add(info.metaInfo);
        }
    }

    Info infoOf(CacheOwner owner) {
        return byOwner.get(owner);
    }

    TypeSerializer<Object> keySerializer() {
        return keySerializer;
    }

    List<StateMetaInfoSnapshot> metaInfos() {
        return metaInfos;
    }
}
