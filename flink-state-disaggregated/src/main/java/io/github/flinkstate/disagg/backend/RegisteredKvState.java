package io.github.flinkstate.disagg.backend;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.RegisteredKeyValueStateBackendMetaInfo;

/**
 * One registered keyed state: its Flink meta info (name, type, current serializers) and the stable
 * id that prefixes its engine keys ({@link KeyLayout}).
 *
 * <p>Thread safety: the meta info is replaced only on the task thread (re-registration); states
 * read it on the same thread.
 */
public final class RegisteredKvState {

    private final int stateId;
    private volatile RegisteredKeyValueStateBackendMetaInfo<?, ?> metaInfo;

    public RegisteredKvState(int stateId, RegisteredKeyValueStateBackendMetaInfo<?, ?> metaInfo) {
        this.stateId = stateId;
        this.metaInfo = metaInfo;
    }

    public int stateId() {
        return stateId;
    }

    public RegisteredKeyValueStateBackendMetaInfo<?, ?> metaInfo() {
        return metaInfo;
    }

    public void setMetaInfo(RegisteredKeyValueStateBackendMetaInfo<?, ?> metaInfo) {
        this.metaInfo = metaInfo;
    }

    @SuppressWarnings("unchecked")
    public <N> TypeSerializer<N> namespaceSerializer() {
        return (TypeSerializer<N>) metaInfo.getNamespaceSerializer();
    }

    @SuppressWarnings("unchecked")
    public <V> TypeSerializer<V> stateSerializer() {
        return (TypeSerializer<V>) metaInfo.getStateSerializer();
    }
}
