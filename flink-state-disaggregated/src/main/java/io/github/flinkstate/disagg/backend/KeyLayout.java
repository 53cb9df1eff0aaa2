package io.github.flinkstate.disagg.backend;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * The engine key layout of keyed state (docs/disaggregated.md, "Key layout"):
 *
 * <pre>
 *  key group (u16 BE) | state id (u32 BE) | u32 len | key | u32 len | namespace | suffix
 * </pre>
 *
 * <p>The key group comes first (the engine clips and rescales by it); the state id second, so all
 * entries of one state in one key group are one contiguous range and a scan of one state visits key
 * groups in order through one iterator (a reseek per key group, never a new iterator). The length
 * prefixes (always written: some fixed-length serializers write more bytes than they declare) make
 * the (key, namespace) prefix unambiguous: no prefix of one state entry is a prefix of another's.
 * The suffix is empty for value, reducing and aggregating state, the serialized user key for map
 * state, and the engine's append sequence (8 bytes) for each list element.
 *
 * <p>State ids are the first 4 bytes of SHA-256 of the state name, so every subtask and every
 * restored checkpoint agrees on them without coordination; the backend refuses two names with the
 * same id.
 *
 * <p>Thread safety: not thread-safe (reused buffers); one per task thread. The static decode
 * helpers are thread-safe.
 */
public final class KeyLayout {

    public static final int KEY_GROUP_BYTES = 2;
    public static final int STATE_ID_BYTES = 4;
    public static final int HEADER_BYTES = KEY_GROUP_BYTES + STATE_ID_BYTES;

    private final DataOutputSerializer out = new DataOutputSerializer(64);
    private final DataOutputSerializer part = new DataOutputSerializer(32);

    /** The stable id of a state name. */
    public static int stateId(String stateName) {
        try {
            byte[] h =
                    MessageDigest.getInstance("SHA-256")
                            .digest(stateName.getBytes(StandardCharsets.UTF_8));
            return ((h[0] & 0xFF) << 24)
                    | ((h[1] & 0xFF) << 16)
                    | ((h[2] & 0xFF) << 8)
                    | (h[3] & 0xFF);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@code keyGroup | stateId}: the prefix of all entries of a state in one key group. */
    public static byte[] statePrefix(int keyGroup, int stateId) {
        byte[] b = new byte[HEADER_BYTES];
        b[0] = (byte) (keyGroup >>> 8);
        b[1] = (byte) keyGroup;
        b[2] = (byte) (stateId >>> 24);
        b[3] = (byte) (stateId >>> 16);
        b[4] = (byte) (stateId >>> 8);
        b[5] = (byte) stateId;
        return b;
    }

    /**
     * The length of the (key group, state, key, namespace) prefix of an engine key, which the
     * engine's bloom filters also hold ({@code LsmOptions.bloomPrefix}), so that reading a list or
     * iterating a map skips the files that hold nothing of it; -1 when {@code engineKey} is too
     * short to hold a whole prefix (a state or key-group prefix). The prefix's own length prefixes
     * determine it, so every key that starts with a whole prefix has that prefix's length.
     */
    public static int bloomPrefixLength(byte[] engineKey) {
        long at = HEADER_BYTES;
        for (int part = 0; part < 2; part++) {
            if (at + Integer.BYTES > engineKey.length) {
                return -1;
            }
            int i = (int) at;
            long len =
                    ((engineKey[i] & 0xFFL) << 24)
                            | ((engineKey[i + 1] & 0xFFL) << 16)
                            | ((engineKey[i + 2] & 0xFFL) << 8)
                            | (engineKey[i + 3] & 0xFFL);
            at += Integer.BYTES + len;
        }
        return at <= engineKey.length ? (int) at : -1;
    }

    /** The state id of an engine key. */
    public static int stateIdOf(byte[] key) {
        return ((key[2] & 0xFF) << 24)
                | ((key[3] & 0xFF) << 16)
                | ((key[4] & 0xFF) << 8)
                | (key[5] & 0xFF);
    }

    /** The full (key group, state, key, namespace) prefix. */
    public <K, N> byte[] prefix(
            int keyGroup,
            int stateId,
            K key,
            TypeSerializer<K> keySerializer,
            N namespace,
            TypeSerializer<N> namespaceSerializer) {
        try {
            out.clear();
            out.write(statePrefix(keyGroup, stateId));
            writePart(key, keySerializer);
            writePart(namespace, namespaceSerializer);
            return out.getCopyOfBuffer();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code prefix} followed by the serialized {@code suffix} object. */
    public <T> byte[] withSuffix(byte[] prefix, T suffix, TypeSerializer<T> serializer) {
        try {
            out.clear();
            out.write(prefix);
            serializer.serialize(suffix, out);
            return out.getCopyOfBuffer();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private <T> void writePart(T value, TypeSerializer<T> serializer) throws IOException {
        part.clear();
        serializer.serialize(value, part);
        out.writeInt(part.length());
        out.write(part.getSharedBuffer(), 0, part.length());
    }

    /** A cursor that decodes the parts of one engine key in order. */
    public static final class Reader {
        private final DataInputDeserializer in = new DataInputDeserializer();
        private byte[] key;

        /** Positions after the header of {@code engineKey}. */
        public Reader reset(byte[] engineKey) {
            this.key = engineKey;
            in.setBuffer(engineKey, HEADER_BYTES, engineKey.length - HEADER_BYTES);
            return this;
        }

        public <T> T read(TypeSerializer<T> serializer) throws IOException {
            int len = in.readInt();
            int start = in.getPosition();
            DataInputDeserializer sub = new DataInputDeserializer(key, start, len);
            T v = serializer.deserialize(sub);
            in.skipBytesToRead(len);
            return v;
        }

        /** Skips a part written with {@code serializer}. */
        public <T> void skip(TypeSerializer<T> serializer) throws IOException {
            in.skipBytesToRead(in.readInt());
        }

        /** The bytes after the current position (the suffix). */
        public byte[] rest() {
            return Arrays.copyOfRange(key, in.getPosition(), key.length);
        }

        /** Reads the rest as one object (map user key). */
        public <T> T readRest(TypeSerializer<T> serializer) throws IOException {
            return serializer.deserialize(in);
        }
    }
}
