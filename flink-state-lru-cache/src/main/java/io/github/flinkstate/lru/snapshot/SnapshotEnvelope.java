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
 *   <li>Delegate handle is an {@code IncrementalRemoteKeyedStateHandle} (RocksDB checkpoints, full
 *       or incremental, and native savepoints): the same handle, same id and shared files, with the
 *       delegate's meta stream moved to its private files under {@link
 *       CacheSnapshotFormat#DELEGATE_META_NAME} and the cache stream added under {@link
 *       CacheSnapshotFormat#CACHE_STREAM_NAME}.
 *   <li>Delegate handle is a {@code KeyGroupsStateHandle} (HashMap): a new handle whose private
 *       files are the delegate's stream ({@link CacheSnapshotFormat#DELEGATE_STREAM_NAME}) and the
 *       cache stream; the delegate's key-group offsets are in the cache stream's header.
 *   <li>No delegate handle: a new handle with the cache stream only.
 * </ul>
 *
 * <p>In every layout the envelope's meta stream is {@link PlainRestoreGuard}'s, so that a backend
 * other than the cache fails to restore it with a message saying what to do, instead of silently
 * restoring only the delegate's part. When no entry is dirty, the delegate's handle is returned
 * unchanged: the delegate then has the complete state and any backend that reads the delegate's
 * format may restore it. Envelopes of layout 1 (delegate meta stream in place, or the 5-byte meta
 * {@code LRUC\x01}) are still read. Stateless.
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
            privateState.add(
                    HandleAndLocalPath.of(
                            inc.getMetaDataStateHandle(), CacheSnapshotFormat.DELEGATE_META_NAME));
            privateState.add(cacheEntry);
            StreamStateHandle guard = guardMeta();
            return IncrementalRemoteKeyedStateHandle.restore(
                    inc.getBackendIdentifier(),
                    inc.getKeyGroupRange(),
                    inc.getCheckpointId(),
                    inc.getSharedState(),
                    privateState,
                    guard,
                    inc.getCheckpointedSize() + cacheStream.getStateSize() + guard.getStateSize(),
                    inc.getStateHandleId());
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
        StreamStateHandle meta = guardMeta();
        return new IncrementalRemoteKeyedStateHandle(
                UUID.randomUUID(),
                keyGroupRange,
                checkpointId,
                Collections.emptyList(),
                privateState,
                meta,
                size + meta.getStateSize());
    }

    /** A fresh handle (own id) holding {@link PlainRestoreGuard}'s meta bytes, kept inline. */
    private static StreamStateHandle guardMeta() {
        return new ByteStreamStateHandle(
                "flinkstate-lru-envelope-" + UUID.randomUUID(), PlainRestoreGuard.metaBytes());
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
                        p ->
                                CacheSnapshotFormat.CACHE_STREAM_NAME.equals(p.getLocalPath())
                                        || CacheSnapshotFormat.DELEGATE_META_NAME.equals(
                                                p.getLocalPath()));
                HandleAndLocalPath delegateMeta =
                        privateEntry(envelope, CacheSnapshotFormat.DELEGATE_META_NAME);
                // layout 1 envelopes kept the delegate's meta stream in place
                StreamStateHandle meta =
                        delegateMeta == null
                                ? inc.getMetaDataStateHandle()
                                : delegateMeta.getHandle();
                return IncrementalRemoteKeyedStateHandle.restore(
                        inc.getBackendIdentifier(),
                        inc.getKeyGroupRange(),
                        inc.getCheckpointId(),
                        inc.getSharedState(),
                        privateState,
                        meta,
                        inc.getCheckpointedSize(),
                        inc.getStateHandleId());
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
