package io.github.flinkstate.lru.snapshot;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeOffsets;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.memory.ByteStreamStateHandle;

/**
 * Packs the delegate's snapshot handle and the cache stream into one of Flink's own handle types
 * (an {@link IncrementalRemoteKeyedStateHandle}), because checkpoint metadata can hold nothing
 * else, and unpacks it again on restore.
 *
 * <ul>
 *   <li>Delegate handle is an {@code IncrementalRemoteKeyedStateHandle} (RocksDB incremental or
 *       native savepoint): the same handle, same id and shared files, with the cache stream added
 *       to its private files under {@link CacheSnapshotFormat#CACHE_STREAM_NAME}.
 *   <li>Delegate handle is a {@code KeyGroupsStateHandle} (HashMap, RocksDB full): a new handle
 *       whose private files are the delegate's stream ({@link
 *       CacheSnapshotFormat#DELEGATE_STREAM_NAME}) and the cache stream; the delegate's key-group
 *       offsets are in the cache stream's header.
 *   <li>No delegate handle: a new handle with the cache stream only.
 * </ul>
 *
 * When no entry is dirty, the delegate's handle is returned unchanged. Stateless.
 */
public final class SnapshotEnvelope {

    private SnapshotEnvelope() {}

    /** Kind of the delegate handle, written into the cache stream header. */
    public static byte delegateKind(KeyedStateHandle delegate) {
        if (delegate == null) {
            return CacheSnapshotFormat.DELEGATE_NONE;
        }
        if (delegate instanceof IncrementalRemoteKeyedStateHandle) {
            return CacheSnapshotFormat.DELEGATE_INCREMENTAL;
        }
        if (delegate instanceof KeyGroupsStateHandle) {
            return CacheSnapshotFormat.DELEGATE_KEY_GROUPS;
        }
        throw new IllegalStateException(
                "The delegate backend produced a snapshot handle of type "
                        + delegate.getClass().getName()
                        + ", which the LRU cache backend cannot package; use a delegate that"
                        + " produces incremental or key-group handles (hashmap, rocksdb).");
    }

    public static KeyedStateHandle wrap(
            KeyedStateHandle delegate,
            StreamStateHandle cacheStream,
            long checkpointId,
            KeyGroupRange keyGroupRange) {
        if (cacheStream == null) {
            return delegate;
        }
        HandleAndLocalPath cacheEntry =
                HandleAndLocalPath.of(cacheStream, CacheSnapshotFormat.CACHE_STREAM_NAME);
        if (delegate instanceof IncrementalRemoteKeyedStateHandle) {
            IncrementalRemoteKeyedStateHandle inc = (IncrementalRemoteKeyedStateHandle) delegate;
            List<HandleAndLocalPath> privateState = new ArrayList<>(inc.getPrivateState());
            privateState.add(cacheEntry);
            return withPrivateState(
                    inc, privateState, inc.getCheckpointedSize() + cacheStream.getStateSize());
        }
        List<HandleAndLocalPath> privateState = new ArrayList<>(2);
        long size = cacheStream.getStateSize();
        if (delegate instanceof KeyGroupsStateHandle) {
            StreamStateHandle stream = ((KeyGroupsStateHandle) delegate).getDelegateStateHandle();
            privateState.add(
                    HandleAndLocalPath.of(stream, CacheSnapshotFormat.DELEGATE_STREAM_NAME));
            size += stream.getStateSize();
        }
        privateState.add(cacheEntry);
        StreamStateHandle meta =
                new ByteStreamStateHandle(
                        "flinkstate-lru-envelope-" + UUID.randomUUID(),
                        CacheSnapshotFormat.ENVELOPE_META);
        return new IncrementalRemoteKeyedStateHandle(
                UUID.randomUUID(),
                keyGroupRange,
                checkpointId,
                Collections.emptyList(),
                privateState,
                meta,
                size + meta.getStateSize());
    }

    /** The cache stream of an envelope, or null if the handle is not one of ours. */
    public static StreamStateHandle cacheStreamOf(KeyedStateHandle handle) {
        HandleAndLocalPath entry = privateEntry(handle, CacheSnapshotFormat.CACHE_STREAM_NAME);
        return entry == null ? null : entry.getHandle();
    }

    /**
     * The delegate's own handle inside an envelope, clipped to {@code range}, or null if the
     * delegate had none or it does not intersect the range.
     *
     * @param header the header read from the envelope's cache stream
     */
    public static KeyedStateHandle delegateHandleOf(
            KeyedStateHandle envelope, CacheStreamHeader header, KeyGroupRange range) {
        IncrementalRemoteKeyedStateHandle inc = (IncrementalRemoteKeyedStateHandle) envelope;
        switch (header.delegateKind()) {
            case CacheSnapshotFormat.DELEGATE_NONE:
                return null;
            case CacheSnapshotFormat.DELEGATE_INCREMENTAL:
                List<HandleAndLocalPath> privateState = new ArrayList<>(inc.getPrivateState());
                privateState.removeIf(
                        p -> CacheSnapshotFormat.CACHE_STREAM_NAME.equals(p.getLocalPath()));
                return withPrivateState(inc, privateState, inc.getCheckpointedSize());
            case CacheSnapshotFormat.DELEGATE_KEY_GROUPS:
                HandleAndLocalPath stream =
                        privateEntry(envelope, CacheSnapshotFormat.DELEGATE_STREAM_NAME);
                if (stream == null) {
                    throw new IllegalStateException(
                            "LRU cache snapshot "
                                    + envelope.getStateHandleId()
                                    + " lacks its delegate stream "
                                    + CacheSnapshotFormat.DELEGATE_STREAM_NAME);
                }
                KeyGroupRangeOffsets offsets = header.delegateOffsets();
                return new KeyGroupsStateHandle(offsets, stream.getHandle()).getIntersection(range);
            default:
                throw new IllegalStateException("Unknown delegate kind " + header.delegateKind());
        }
    }

    /** The same handle (same id, shared files, meta) with other private files. */
    private static IncrementalRemoteKeyedStateHandle withPrivateState(
            IncrementalRemoteKeyedStateHandle handle,
            List<HandleAndLocalPath> privateState,
            long checkpointedSize) {
        return IncrementalRemoteKeyedStateHandle.restore(
                handle.getBackendIdentifier(),
                handle.getKeyGroupRange(),
                handle.getCheckpointId(),
                handle.getSharedState(),
                privateState,
                handle.getMetaDataStateHandle(),
                checkpointedSize,
                handle.getStateHandleId());
    }

    private static HandleAndLocalPath privateEntry(KeyedStateHandle handle, String name) {
        if (!(handle instanceof IncrementalRemoteKeyedStateHandle)) {
            return null;
        }
        for (HandleAndLocalPath p :
                ((IncrementalRemoteKeyedStateHandle) handle).getPrivateState()) {
            if (name.equals(p.getLocalPath())) {
                return p;
            }
        }
        return null;
    }
}
