package io.github.flinkstate.disagg.backend;

import io.github.flinkstate.disagg.engine.LsmStore;
import io.github.flinkstate.disagg.engine.iterator.LsmIterator;
import io.github.flinkstate.disagg.engine.key.Bytes;
import io.github.flinkstate.disagg.engine.key.KeyRange;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.MapSerializer;
import org.apache.flink.api.common.typeutils.base.MapSerializerSnapshot;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.RegisteredKeyValueStateBackendMetaInfo;
import org.apache.flink.runtime.state.ttl.TtlAwareSerializer;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.util.StateMigrationException;

/**
 * Serializer compatibility on re-registration of a restored state, as Flink's RocksDB backend does:
 * the namespace serializer must be compatible as is; a state serializer that is compatible after
 * migration makes the backend rewrite every value of the state (list elements and map values one by
 * one, TTL switched on or off through {@link TtlAwareSerializer}); an incompatible one, and a map
 * state whose user-key serializer would need a migration (the keys are not rewritten), fail with
 * {@link StateMigrationException}.
 *
 * <p>Thread safety: task thread only.
 */
final class StateMigration<K> {

    private final DisaggregatedKeyedStateBackend<K> backend;
    private final TtlTimeProvider ttlTimeProvider;

    StateMigration(DisaggregatedKeyedStateBackend<K> backend, TtlTimeProvider ttlTimeProvider) {
        this.backend = backend;
        this.ttlTimeProvider = ttlTimeProvider;
    }

    <N, SV> RegisteredKeyValueStateBackendMetaInfo<N, SV> updateRestoredMetaInfo(
            RegisteredKvState info,
            RegisteredKeyValueStateBackendMetaInfo<N, SV> restored,
            TypeSerializer<N> namespaceSerializer,
            StateDescriptor<?, SV> stateDesc,
            TypeSerializer<SV> stateSerializer)
            throws Exception {
        TypeSerializer<N> previousNamespace = restored.getNamespaceSerializer();
        TypeSerializerSchemaCompatibility<N> nsCompat =
                restored.updateNamespaceSerializer(namespaceSerializer);
        if (nsCompat.isCompatibleAfterMigration() || nsCompat.isIncompatible()) {
            throw new StateMigrationException(
                    "The new namespace serializer ("
                            + namespaceSerializer
                            + ") of state "
                            + stateDesc.getName()
                            + " must be compatible with the old one ("
                            + previousNamespace
                            + ").");
        }
        restored.checkStateMetaInfo(stateDesc);
        TypeSerializer<SV> previousState = restored.getStateSerializer();
        TypeSerializerSchemaCompatibility<SV> compat =
                restored.updateStateSerializer(stateSerializer);
        if (compat.isIncompatible()) {
            throw new StateMigrationException(
                    "The new state serializer ("
                            + stateSerializer
                            + ") of state "
                            + stateDesc.getName()
                            + " must not be incompatible with the old one ("
                            + previousState
                            + ").");
        }
        if (compat.isCompatibleAfterMigration()) {
            if (stateDesc.getType() == StateDescriptor.Type.MAP) {
                checkUserKeysUnchanged(
                        stateDesc.getName(),
                        restored.getPreviousStateSerializerSnapshot(),
                        stateSerializer);
            }
            migrate(info, stateDesc.getType(), previousState, stateSerializer);
        }
        return restored;
    }

    /**
     * A map state's user keys are serialized into the stored keys, which a migration does not
     * rewrite (it rewrites values in place), so their serializer must be compatible as is; as in
     * Flink's RocksDB backend, only the map's value serializer may evolve.
     */
    private static void checkUserKeysUnchanged(
            String stateName, TypeSerializerSnapshot<?> previous, TypeSerializer<?> next)
            throws StateMigrationException {
        if (!(previous instanceof MapSerializerSnapshot) || !(next instanceof MapSerializer)) {
            throw new StateMigrationException(
                    "Map state "
                            + stateName
                            + " cannot be migrated: expected a map serializer and its snapshot,"
                            + " found "
                            + next
                            + " and "
                            + previous);
        }
        TypeSerializerSnapshot<?> oldKeys =
                ((MapSerializerSnapshot<?, ?>) previous).getKeySerializerSnapshot();
        TypeSerializer<?> newKeys = ((MapSerializer<?, ?>) next).getKeySerializer();
        if (!resolve(newKeys, oldKeys).isCompatibleAsIs()) {
            throw new StateMigrationException(
                    "The new user-key serializer ("
                            + newKeys
                            + ") of map state "
                            + stateName
                            + " requires a migration of the keys, which this backend (like"
                            + " RocksDB) cannot do: only the values of a map state may change"
                            + " their serializer. Keep the old key serializer, or move the state"
                            + " with the State Processor API.");
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> TypeSerializerSchemaCompatibility<T> resolve(
            TypeSerializer<T> next, TypeSerializerSnapshot<?> previous) {
        return next.snapshotConfiguration()
                .resolveSchemaCompatibility((TypeSerializerSnapshot<T>) previous);
    }

    /** Rewrites every stored value of one state from {@code prior} to {@code next}. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private void migrate(
            RegisteredKvState info,
            StateDescriptor.Type type,
            TypeSerializer<?> prior,
            TypeSerializer<?> next)
            throws IOException {
        TtlAwareSerializer priorAware = TtlAwareSerializer.wrapTtlAwareSerializer(prior);
        TtlAwareSerializer nextAware = TtlAwareSerializer.wrapTtlAwareSerializer(next);
        boolean mapFlag = false;
        boolean listFlag = type == StateDescriptor.Type.LIST;
        if (listFlag) {
            priorAware =
                    ((TtlAwareSerializer.TtlAwareListSerializer) priorAware).getElementSerializer();
            nextAware =
                    ((TtlAwareSerializer.TtlAwareListSerializer) nextAware).getElementSerializer();
        } else if (type == StateDescriptor.Type.MAP) {
            priorAware =
                    ((TtlAwareSerializer.TtlAwareMapSerializer) priorAware).getValueSerializer();
            nextAware = ((TtlAwareSerializer.TtlAwareMapSerializer) nextAware).getValueSerializer();
            mapFlag = true;
        }
        LsmStore store = backend.store();
        DataOutputSerializer out = new DataOutputSerializer(64);
        var range = backend.getKeyGroupRange();
        for (int kg = range.getStartKeyGroup(); kg <= range.getEndKeyGroup(); kg++) {
            byte[] prefix = KeyLayout.statePrefix(kg, info.stateId());
            List<byte[][]> rewritten = new ArrayList<>();
            try (LsmIterator it = store.scan(new KeyRange(prefix, Bytes.prefixLimit(prefix)))) {
                for (; it.isValid(); it.next()) {
                    DataInputDeserializer in = new DataInputDeserializer(it.value());
                    out.clear();
                    if (mapFlag) {
                        boolean isNull = in.readBoolean();
                        out.writeBoolean(isNull);
                        if (isNull) {
                            continue;
                        }
                    }
                    TtlAwareSerializer p = priorAware;
                    nextAware.migrateValueFromPriorSerializer(
                            p, () -> p.deserialize(in), out, ttlTimeProvider);
                    // a list entry may hold several elements, separated by ','
                    while (listFlag && in.available() > 0) {
                        out.writeByte(in.readByte());
                        nextAware.migrateValueFromPriorSerializer(
                                p, () -> p.deserialize(in), out, ttlTimeProvider);
                    }
                    rewritten.add(new byte[][] {it.key(), out.getCopyOfBuffer()});
                }
            }
            for (byte[][] kv : rewritten) {
                store.put(kv[0], kv[1]);
            }
        }
    }
}
