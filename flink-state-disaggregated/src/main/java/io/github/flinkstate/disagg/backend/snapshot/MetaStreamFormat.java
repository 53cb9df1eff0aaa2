package io.github.flinkstate.disagg.backend.snapshot;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * The meta stream of a disaggregated checkpoint (docs/format/disagg-checkpoint-meta.md): magic,
 * version, Flink's {@code KeyedBackendSerializationProxy} (written by the caller), the state-id
 * table, the engine manifest and the timers.
 *
 * <p>Thread safety: stateless.
 */
public final class MetaStreamFormat {

    /** ASCII "DISAGCKP". */
    public static final long MAGIC = 0x4449534147434B50L;

    public static final int VERSION = 1;

    /** Largest manifest a meta stream may hold (a corrupt length fails instead of allocating). */
    static final int MAX_MANIFEST_BYTES = 1 << 30;

    private MetaStreamFormat() {}

    public static void writeHeader(DataOutputView out) throws IOException {
        out.writeLong(MAGIC);
        out.writeByte(VERSION);
    }

    /** Reads and checks the header; {@code what} names the stream in errors. */
    public static void readHeader(DataInputView in, String what) throws IOException {
        long magic = in.readLong();
        if (magic != MAGIC) {
            throw new IOException(
                    "Not a disaggregated checkpoint meta stream: "
                            + what
                            + " (magic "
                            + Long.toHexString(magic)
                            + ")");
        }
        int version = in.readUnsignedByte();
        if (version != VERSION) {
            throw new IOException(
                    "Unsupported disaggregated checkpoint meta version " + version + " in " + what);
        }
    }

    public static void writeStateIds(DataOutputView out, Map<String, Integer> ids)
            throws IOException {
        out.writeInt(ids.size());
        for (Map.Entry<String, Integer> e : ids.entrySet()) {
            out.writeUTF(e.getKey());
            out.writeInt(e.getValue());
        }
    }

    public static Map<String, Integer> readStateIds(DataInputView in) throws IOException {
        int n = count(in.readInt(), "state id count");
        Map<String, Integer> ids = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            ids.put(in.readUTF(), in.readInt());
        }
        return ids;
    }

    public static void writeManifest(DataOutputView out, byte[] manifest) throws IOException {
        out.writeInt(manifest.length);
        out.write(manifest);
    }

    /**
     * Reads the manifest of a meta stream of {@code streamBytes} bytes (0 or less: unknown): a
     * length beyond the stream fails before anything is allocated.
     */
    public static byte[] readManifest(DataInputView in, long streamBytes) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > MAX_MANIFEST_BYTES) {
            throw new IOException(
                    "corrupt manifest length " + n + " (0 to " + MAX_MANIFEST_BYTES + " bytes)");
        }
        if (streamBytes > 0 && n > streamBytes) {
            throw new IOException(
                    "corrupt manifest length "
                            + n
                            + ", or the stream ends early: it has "
                            + streamBytes
                            + " bytes in all");
        }
        byte[] m = new byte[n];
        in.readFully(m);
        return m;
    }

    /** Names of the files in the handle, in the order written (for a consistency check). */
    public static void writeFileNames(DataOutputView out, List<String> names) throws IOException {
        out.writeInt(names.size());
        for (String n : names) {
            out.writeUTF(n);
        }
    }

    public static List<String> readFileNames(DataInputView in) throws IOException {
        int n = count(in.readInt(), "file name count");
        List<String> names = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            names.add(in.readUTF());
        }
        return names;
    }

    private static int count(int n, String what) throws IOException {
        if (n < 0) {
            throw new IOException("corrupt " + what + " " + n);
        }
        return n;
    }
}
