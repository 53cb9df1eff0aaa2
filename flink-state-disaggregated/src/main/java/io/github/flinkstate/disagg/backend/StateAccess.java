package io.github.flinkstate.disagg.backend;

import io.github.flinkstate.disagg.engine.LsmStore;
import org.apache.flink.api.common.typeutils.TypeSerializer;

/**
 * What a state object needs from its keyed backend: the engine and the engine prefix of the current
 * key in a namespace.
 *
 * <p>Thread safety: task thread only.
 */
public interface StateAccess<K> {

    LsmStore store();

    TypeSerializer<K> getKeySerializer();

    int getNumberOfKeyGroups();

    /** {@code keyGroup | stateId | key | namespace} of the current key. */
    <N> byte[] currentPrefix(int stateId, N namespace, TypeSerializer<N> namespaceSerializer);

    /**
     * {@code keyGroup | stateId | key | namespace} of an explicit key, serialized with the given
     * serializers (a queryable-state lookup passes the duplicates of its own thread).
     */
    <N> byte[] prefixOf(
            K key,
            TypeSerializer<K> keySerializer,
            int stateId,
            N namespace,
            TypeSerializer<N> namespaceSerializer);

    KeyLayout layout();
}
