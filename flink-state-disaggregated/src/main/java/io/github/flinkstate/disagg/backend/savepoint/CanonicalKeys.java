package io.github.flinkstate.disagg.backend.savepoint;

import io.github.flinkstate.disagg.backend.KeyLayout;
import java.io.IOException;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.CompositeKeySerializationUtils;

/**
 * Converts keys between the engine layout ({@link KeyLayout}: {@code kg u16 | state id | u32 len |
 * key | u32 len | namespace | suffix}) and the key layout of Flink's canonical savepoint format
 * ({@code kg (1 or 2 bytes) | key [vlen] | namespace [vlen] | user key}), see
 * docs/disaggregated.md, "Savepoints".
 *
 * <p>Canonical keys carry the key group in as many bytes as the job's maximum parallelism needs
 * (one up to 128 key groups, else two) and the lengths of key and namespace only when both
 * serializers are variable-sized ("ambiguous"), as a little-endian base-256 number; Flink's {@link
 * CompositeKeySerializationUtils} reads and writes those parts. Key, namespace and user key bytes
 * are the serializers' output in both layouts, so the conversion copies bytes and never
 * deserializes a key on the write side.
 *
 * <p>Thread safety: not thread-safe (reused buffers); one instance per iterator or restore.
 */
final class CanonicalKeys {

    private final int prefixBytes;
    private final DataOutputSerializer out = new DataOutputSerializer(64);
    private final DataInputDeserializer in = new DataInputDeserializer();

    CanonicalKeys(int numberOfKeyGroups) {
        this.prefixBytes =
                CompositeKeySerializationUtils.computeRequiredBytesInKeyGroupPrefix(
                        numberOfKeyGroups);
    }

    int prefixBytes() {
        return prefixBytes;
    }

    /** Whether canonical keys of these serializers carry key and namespace lengths. */
    static boolean ambiguous(TypeSerializer<?> keySerializer, TypeSerializer<?> nsSerializer) {
        return CompositeKeySerializationUtils.isAmbiguousKeyPossible(keySerializer, nsSerializer);
    }

    /** Length of {@code header | u32 len | key | u32 len | namespace} of an engine key. */
    static int pairPrefixLength(byte[] engineKey) {
        int p = KeyLayout.HEADER_BYTES;
        p += 4 + readInt(engineKey, p);
        p += 4 + readInt(engineKey, p);
        return p;
    }

    /**
     * The canonical key of an engine key; the engine key's suffix (a map's user key) is kept when
     * {@code withSuffix}, dropped otherwise (a list element's append sequence).
     */
    byte[] toCanonical(byte[] engineKey, int keyGroup, boolean ambiguous, boolean withSuffix)
            throws IOException {
        int keyLenAt = KeyLayout.HEADER_BYTES;
        int keyLen = readInt(engineKey, keyLenAt);
        int nsLenAt = keyLenAt + 4 + keyLen;
        int nsLen = readInt(engineKey, nsLenAt);
        int suffixAt = nsLenAt + 4 + nsLen;
        out.clear();
        CompositeKeySerializationUtils.writeKeyGroup(keyGroup, prefixBytes, out);
        out.write(engineKey, keyLenAt + 4, keyLen);
        if (ambiguous) {
            CompositeKeySerializationUtils.writeVariableIntBytes(keyLen, out);
        }
        out.write(engineKey, nsLenAt + 4, nsLen);
        if (ambiguous) {
            CompositeKeySerializationUtils.writeVariableIntBytes(nsLen, out);
        }
        if (withSuffix) {
            out.write(engineKey, suffixAt, engineKey.length - suffixAt);
        }
        return out.getCopyOfBuffer();
    }

    /** The canonical key of a timer: key group, then the element as its serializer writes it. */
    <T> byte[] timerKey(int keyGroup, T element, TypeSerializer<T> serializer) throws IOException {
        out.clear();
        CompositeKeySerializationUtils.writeKeyGroup(keyGroup, prefixBytes, out);
        serializer.serialize(element, out);
        return out.getCopyOfBuffer();
    }

    /**
     * The engine key of a canonical key: {@code kg | stateId | key | namespace}, followed by the
     * canonical key's remaining bytes (a map's user key) when {@code withSuffix}. Key and namespace
     * are located by deserializing them with the serializers that wrote them.
     *
     * @throws IOException if the key is shorter than its parts or, without {@code withSuffix}, has
     *     bytes after the namespace
     */
    byte[] toEngine(
            byte[] canonicalKey,
            int keyGroup,
            int stateId,
            TypeSerializer<?> keySerializer,
            TypeSerializer<?> nsSerializer,
            boolean ambiguous,
            boolean withSuffix)
            throws IOException {
        in.setBuffer(canonicalKey);
        in.skipBytesToRead(prefixBytes);
        int keyAt = in.getPosition();
        keySerializer.deserialize(in);
        int keyEnd = in.getPosition();
        if (ambiguous) {
            CompositeKeySerializationUtils.readVariableIntBytes(in, keyEnd - keyAt);
        }
        int nsAt = in.getPosition();
        nsSerializer.deserialize(in);
        int nsEnd = in.getPosition();
        if (ambiguous) {
            CompositeKeySerializationUtils.readVariableIntBytes(in, nsEnd - nsAt);
        }
        int restAt = in.getPosition();
        if (!withSuffix && restAt != canonicalKey.length) {
            throw new IOException(
                    (canonicalKey.length - restAt)
                            + " unexpected byte(s) after the namespace of a savepoint key");
        }
        out.clear();
        out.write(KeyLayout.statePrefix(keyGroup, stateId));
        out.writeInt(keyEnd - keyAt);
        out.write(canonicalKey, keyAt, keyEnd - keyAt);
        out.writeInt(nsEnd - nsAt);
        out.write(canonicalKey, nsAt, nsEnd - nsAt);
        if (withSuffix) {
            out.write(canonicalKey, restAt, canonicalKey.length - restAt);
        }
        return out.getCopyOfBuffer();
    }

    private static int readInt(byte[] b, int at) {
        return ((b[at] & 0xFF) << 24)
                | ((b[at + 1] & 0xFF) << 16)
                | ((b[at + 2] & 0xFF) << 8)
                | (b[at + 3] & 0xFF);
    }
}
