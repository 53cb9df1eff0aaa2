package io.github.flinkstate.lru.restore;

import io.github.flinkstate.lru.cow.CacheEntry;
import io.github.flinkstate.lru.snapshot.CacheSnapshotFormat;
import io.github.flinkstate.lru.snapshot.CacheStreamHeader;
import io.github.flinkstate.lru.state.DelegateWrites;
import java.io.EOFException;
import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.memory.DataInputViewStreamWrapper;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedBackendSerializationProxy;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.apache.flink.util.IOUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Replays the cache entries of restored snapshot streams into the (already restored) delegate
 * backend, keeping only the key groups of this backend. After the replay the delegate holds the
 * complete state and the cache starts empty.
 *
 * <p>Not thread-safe; used once by the restoring thread.
 */
public final class CacheSnapshotRestorer<K> {

    private static final Logger LOG = LoggerFactory.getLogger(CacheSnapshotRestorer.class);

    private final AbstractKeyedStateBackend<K> delegate;
    private final KeyGroupRange keyGroupRange;
    private final ClassLoader classLoader;
    private final CloseableRegistry cancelStreamRegistry;
    private final Map<String, RestoredStateTarget> targets = new HashMap<>();

    public CacheSnapshotRestorer(
            AbstractKeyedStateBackend<K> delegate,
            KeyGroupRange keyGroupRange,
            ClassLoader classLoader,
            CloseableRegistry cancelStreamRegistry) {
        this.delegate = delegate;
        this.keyGroupRange = keyGroupRange;
        this.classLoader = classLoader;
        this.cancelStreamRegistry = cancelStreamRegistry;
    }

    /** Human-readable name of a stream for error messages (the file path where there is one). */
    public static String describe(StreamStateHandle handle) {
        if (handle instanceof FileStateHandle) {
            return "file " + ((FileStateHandle) handle).getFilePath();
        }
        return "stream " + handle.getStreamStateHandleID();
    }

    /** Reads only the header of a cache stream. */
    public static CacheStreamHeader readHeader(StreamStateHandle handle, CloseableRegistry registry)
            throws IOException {
        FSDataInputStream in = handle.openInputStream();
        registry.registerCloseable(in);
        try {
            return CacheStreamHeader.read(new DataInputViewStreamWrapper(in), describe(handle));
        } catch (EOFException e) {
            throw new IOException(
                    "LRU cache snapshot "
                            + describe(handle)
                            + " is truncated: it ends inside its header",
                    e);
        } finally {
            if (registry.unregisterCloseable(in)) {
                IOUtils.closeQuietly(in);
            }
        }
    }

    /**
     * Writes every entry of the stream that belongs to this backend's key groups to the delegate.
     */
    public void apply(StreamStateHandle handle) throws Exception {
        String source = describe(handle);
        FSDataInputStream raw = handle.openInputStream();
        cancelStreamRegistry.registerCloseable(raw);
        CountingInputStream counting = new CountingInputStream(raw);
        long applied = 0;
        try {
            DataInputViewStreamWrapper in = new DataInputViewStreamWrapper(counting);
            CacheStreamHeader header = CacheStreamHeader.read(in, source);
            byte lastOp =
                    header.version() >= 2
                            ? CacheSnapshotFormat.OP_APPEND
                            : CacheSnapshotFormat.OP_DELETE;
            KeyedBackendSerializationProxy<K> proxy =
                    new KeyedBackendSerializationProxy<>(classLoader);
            proxy.read(in);
            @SuppressWarnings("unchecked")
            TypeSerializer<Object> keySerializer =
                    (TypeSerializer<Object>) proxy.getKeySerializerSnapshot().restoreSerializer();
            List<StateMetaInfoSnapshot> metaInfos = proxy.getStateMetaInfoSnapshots();
            RestoredStateTarget[] byIndex = new RestoredStateTarget[metaInfos.size()];

            int blocks = in.readInt();
            for (int b = 0; b < blocks; b++) {
                long blockOffset = counting.position();
                int keyGroup = in.readInt();
                int records = in.readInt();
                int length = in.readInt();
                if (records < 0 || length < 0) {
                    throw new IOException(
                            source
                                    + " is corrupt: block header at offset "
                                    + blockOffset
                                    + " has "
                                    + records
                                    + " records and length "
                                    + length);
                }
                if (!keyGroupRange.contains(keyGroup)) {
                    in.skipBytesToRead(length);
                    continue;
                }
                for (int r = 0; r < records; r++) {
                    long recordOffset = counting.position();
                    int index = in.readUnsignedShort();
                    byte op = in.readByte();
                    if (index >= byIndex.length || op < CacheSnapshotFormat.OP_PUT || op > lastOp) {
                        throw new IOException(
                                source
                                        + " is corrupt: record at offset "
                                        + recordOffset
                                        + " has state index "
                                        + index
                                        + " and operation "
                                        + op);
                    }
                    RestoredStateTarget target = byIndex[index];
                    if (target == null) {
                        StateMetaInfoSnapshot meta = metaInfos.get(index);
                        target = targets.get(meta.getName());
                        if (target == null) {
                            target = new RestoredStateTarget(delegate, meta);
                            targets.put(meta.getName(), target);
                        }
                        byIndex[index] = target;
                    }
                    if (op == CacheSnapshotFormat.OP_APPEND
                            && target.type != StateDescriptor.Type.LIST) {
                        throw new IOException(
                                source
                                        + " is corrupt: record at offset "
                                        + recordOffset
                                        + " appends to state "
                                        + metaInfos.get(index).getName()
                                        + " of type "
                                        + target.type
                                        + " (only list state has append records)");
                    }
                    applyRecord(in, op, keyGroup, keySerializer, target);
                    applied++;
                }
            }
            LOG.info("Restored {} cached entries from LRU cache snapshot {}", applied, source);
        } catch (EOFException e) {
            throw new IOException(
                    "LRU cache snapshot "
                            + source
                            + " is truncated at offset "
                            + counting.position(),
                    e);
        } finally {
            if (cancelStreamRegistry.unregisterCloseable(raw)) {
                IOUtils.closeQuietly(raw);
            }
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private void applyRecord(
            DataInputViewStreamWrapper in,
            byte op,
            int keyGroup,
            TypeSerializer<Object> keySerializer,
            RestoredStateTarget target)
            throws Exception {
        Object key = keySerializer.deserialize(in);
        Object namespace = target.namespaceSerializer.deserialize(in);
        Object userKey = null;
        Object value = CacheEntry.ABSENT;
        if (target.type == StateDescriptor.Type.MAP) {
            userKey = target.userKeySerializer.deserialize(in);
            if (op == CacheSnapshotFormat.OP_PUT) {
                boolean isNull = in.readBoolean();
                value = isNull ? null : target.userValueSerializer.deserialize(in);
            }
        } else if (op != CacheSnapshotFormat.OP_DELETE) {
            value = target.valueSerializer.deserialize(in);
        }
        delegate.setCurrentKeyAndKeyGroup((K) key, keyGroup);
        ((org.apache.flink.runtime.state.internal.InternalKvState) target.state)
                .setCurrentNamespace(namespace);
        if (op == CacheSnapshotFormat.OP_APPEND) {
            DelegateWrites.append(target.state, (List<?>) value);
        } else {
            DelegateWrites.write(target.type, target.state, userKey, value);
        }
    }
}
