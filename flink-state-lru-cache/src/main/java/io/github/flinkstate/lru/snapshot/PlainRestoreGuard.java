package io.github.flinkstate.lru.snapshot;

import java.io.IOException;
import java.util.Collections;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.runtime.state.KeyedBackendSerializationProxy;

/**
 * The meta stream of an envelope handle that holds cache entries: a valid Flink keyed-backend meta
 * stream whose key serializer snapshot is {@link GuardSnapshot}, which refuses to be read.
 *
 * <p>Why: an envelope is an {@code IncrementalRemoteKeyedStateHandle} (checkpoint metadata accepts
 * nothing else). Without this guard, a plain RocksDB (or ForSt) backend restoring a retained
 * checkpoint or native savepoint of the cache, e.g. a user turning the cache off, would download
 * the cache stream as an unknown private file, ignore it and silently lose every entry that was
 * only in the cache. Every such backend reads the handle's meta stream, and with it the key
 * serializer snapshot, before it uses the state; the guard makes that read fail with {@link
 * #MESSAGE}, which says what to do. The LRU cache backend itself never reads the guard: it
 * recognises its envelopes by the private file names and restores the delegate with the delegate's
 * own meta stream, which the envelope keeps as a private file ({@link
 * CacheSnapshotFormat#DELEGATE_META_NAME}).
 *
 * <p>The bytes are persisted in checkpoints: the class names below must never change. Stateless.
 */
public final class PlainRestoreGuard {

    /** What a backend that is not the LRU cache reports when it tries to restore an envelope. */
    public static final String MESSAGE =
            "This snapshot was taken by the LRU cache state backend"
                    + " (io.github.flinkstate.lru.LruCacheStateBackendFactory) and part of its state"
                    + " is stored only in the cache's own file ("
                    + CacheSnapshotFormat.CACHE_STREAM_NAME
                    + "), which this backend cannot read; restoring it without the cache would lose"
                    + " that state. To turn the cache off, restore with"
                    + " 'state.backend.type: io.github.flinkstate.lru.LruCacheStateBackendFactory' and"
                    + " 'state.backend.cache.max-entries-num: 0' (the cache's checkpoints are then the"
                    + " delegate's own), or take a canonical savepoint with the cache and restore"
                    + " that with any backend.";

    private static final byte[] META_BYTES = serializeMeta();

    private PlainRestoreGuard() {}

    /** The guard meta stream's bytes (a copy). */
    public static byte[] metaBytes() {
        return META_BYTES.clone();
    }

    private static byte[] serializeMeta() {
        try {
            DataOutputSerializer out = new DataOutputSerializer(128);
            new KeyedBackendSerializationProxy<>(
                            new GuardSerializer(), Collections.emptyList(), false)
                    .write(out);
            return out.getCopyOfBuffer();
        } catch (IOException e) {
            throw new IllegalStateException("Could not write the LRU cache restore guard", e);
        }
    }

    /** Key serializer snapshot that fails to be read, with {@link #MESSAGE}. */
    public static final class GuardSnapshot implements TypeSerializerSnapshot<Object> {

        /** Public no-argument constructor: Flink instantiates snapshots by class name. */
        public GuardSnapshot() {}

        @Override
        public int getCurrentVersion() {
            return 1;
        }

        @Override
        public void writeSnapshot(DataOutputView out) {}

        @Override
        public void readSnapshot(int readVersion, DataInputView in, ClassLoader classLoader)
                throws IOException {
            throw new IOException(MESSAGE);
        }

        @Override
        public TypeSerializer<Object> restoreSerializer() {
            throw new UnsupportedOperationException(MESSAGE);
        }

        @Override
        public TypeSerializerSchemaCompatibility<Object> resolveSchemaCompatibility(
                TypeSerializerSnapshot<Object> oldSerializerSnapshot) {
            return TypeSerializerSchemaCompatibility.incompatible();
        }
    }

    /** Exists only to produce a {@link GuardSnapshot}; serializes nothing. */
    static final class GuardSerializer extends TypeSerializer<Object> {
        private static final long serialVersionUID = 1L;

        @Override
        public boolean isImmutableType() {
            return true;
        }

        @Override
        public TypeSerializer<Object> duplicate() {
            return this;
        }

        @Override
        public Object createInstance() {
            throw new UnsupportedOperationException();
        }

        @Override
        public Object copy(Object from) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Object copy(Object from, Object reuse) {
            throw new UnsupportedOperationException();
        }

        @Override
        public int getLength() {
            return 0;
        }

        @Override
        public void serialize(Object record, DataOutputView target) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Object deserialize(DataInputView source) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Object deserialize(Object reuse, DataInputView source) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void copy(DataInputView source, DataOutputView target) {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean equals(Object obj) {
            return obj instanceof GuardSerializer;
        }

        @Override
        public int hashCode() {
            return GuardSerializer.class.hashCode();
        }

        @Override
        public TypeSerializerSnapshot<Object> snapshotConfiguration() {
            return new GuardSnapshot();
        }
    }
}
