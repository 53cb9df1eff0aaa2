package io.github.flinkstate.disagg.backend.state;

import io.github.flinkstate.disagg.backend.RegisteredKvState;
import io.github.flinkstate.disagg.backend.StateAccess;
import io.github.flinkstate.disagg.engine.LsmStore;
import io.github.flinkstate.disagg.engine.iterator.LsmIterator;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.queryablestate.client.state.serialization.KvStateSerializer;
import org.apache.flink.runtime.state.internal.InternalKvState;
import org.apache.flink.util.FlinkRuntimeException;

/**
 * Base of the keyed states over the LSM engine: namespace handling, value (de)serialization and the
 * engine prefix of the current (key, namespace) (layout: {@code backend.KeyLayout}).
 *
 * <p>Thread safety: task thread only (reused buffers).
 */
public abstract class AbstractDisaggState<K, N, V> implements InternalKvState<K, N, V> {

    protected final StateAccess<K> backend;
    protected final RegisteredKvState info;
    protected N currentNamespace;

    protected AbstractDisaggState(StateAccess<K> backend, RegisteredKvState info) {
        this.backend = backend;
        this.info = info;
    }

    @Override
    public TypeSerializer<K> getKeySerializer() {
        return backend.getKeySerializer();
    }

    @Override
    public TypeSerializer<N> getNamespaceSerializer() {
        return info.namespaceSerializer();
    }

    @Override
    public TypeSerializer<V> getValueSerializer() {
        return info.stateSerializer();
    }

    @Override
    public void setCurrentNamespace(N namespace) {
        this.currentNamespace = namespace;
    }

    protected final LsmStore store() {
        return backend.store();
    }

    protected final byte[] prefix() {
        return prefix(currentNamespace);
    }

    protected final byte[] prefix(N namespace) {
        return backend.currentPrefix(info.stateId(), namespace, getNamespaceSerializer());
    }

    protected final <T> byte[] serialize(T value, TypeSerializer<T> serializer) {
        try {
            DataOutputSerializer out = new DataOutputSerializer(64);
            serializer.serialize(value, out);
            return out.getCopyOfBuffer();
        } catch (IOException e) {
            throw new FlinkRuntimeException("Could not serialize a value of state " + name(), e);
        }
    }

    protected final <T> T deserialize(byte[] bytes, TypeSerializer<T> serializer) {
        try {
            return serializer.deserialize(new DataInputDeserializer(bytes));
        } catch (IOException e) {
            throw new FlinkRuntimeException("Could not deserialize a value of state " + name(), e);
        }
    }

    protected final String name() {
        return info.metaInfo().getName();
    }

    protected static UncheckedIOException io(IOException e) {
        return new UncheckedIOException(e);
    }

    /** True when some entry starts with {@code prefix}. */
    protected final boolean anyUnder(byte[] prefix) throws IOException {
        try (LsmIterator it = store().scanPrefix(prefix)) {
            return it.isValid();
        }
    }

    @Override
    public byte[] getSerializedValue(
            byte[] serializedKeyAndNamespace,
            TypeSerializer<K> safeKeySerializer,
            TypeSerializer<N> safeNamespaceSerializer,
            TypeSerializer<V> safeValueSerializer)
            throws Exception {
        Tuple2<K, N> keyAndNamespace =
                KvStateSerializer.deserializeKeyAndNamespace(
                        serializedKeyAndNamespace, safeKeySerializer, safeNamespaceSerializer);
        byte[] prefix =
                backend.prefixOf(
                        keyAndNamespace.f0,
                        safeKeySerializer,
                        info.stateId(),
                        keyAndNamespace.f1,
                        safeNamespaceSerializer);
        return serializedValueAt(prefix, safeValueSerializer);
    }

    /**
     * The value under {@code prefix} serialized with {@code safeValueSerializer}, or null. Runs on
     * a query thread: it must use no serializer of the state's own (they belong to the task
     * thread).
     */
    protected abstract byte[] serializedValueAt(
            byte[] prefix, TypeSerializer<V> safeValueSerializer) throws Exception;

    @Override
    public StateIncrementalVisitor<K, N, V> getStateIncrementalVisitor(
            int recommendedMaxNumberOfReturnedRecords) {
        throw new UnsupportedOperationException(
                "The disaggregated backend does not support incremental state visitors (used by"
                        + " heap-only TTL cleanup); expired entries are dropped on access.");
    }
}
