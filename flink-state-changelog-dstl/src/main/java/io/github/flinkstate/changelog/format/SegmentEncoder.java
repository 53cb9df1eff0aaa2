package io.github.flinkstate.changelog.format;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;
import java.util.zip.Deflater;
import org.apache.flink.runtime.state.changelog.StateChange;

/**
 * Encodes one change set (the changes of one writer between two sequence numbers) into one
 * self-contained, checksummed and optionally compressed segment, as specified in {@link
 * SegmentFormat}.
 *
 * <p>Thread safety: stateless; every call uses its own {@link Deflater}.
 *
 * <p>Invariants: (1) the returned array is exactly {@code SEGMENT_HEADER_SIZE + stored-length}
 * bytes; (2) the codec byte is {@code CODEC_NONE} whenever compression would not make the payload
 * smaller, so incompressible data never grows by more than the header.
 */
public final class SegmentEncoder {

    private SegmentEncoder() {}

    /** Serializes the raw (uncompressed) payload: key group, length and bytes per change. */
    public static byte[] rawPayload(List<StateChange> changes) throws IOException {
        int size = 0;
        for (StateChange change : changes) {
            size += 8 + change.getChange().length;
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(size);
        DataOutputStream out = new DataOutputStream(bytes);
        for (StateChange change : changes) {
            out.writeInt(change.getKeyGroup());
            out.writeInt(change.getChange().length);
            out.write(change.getChange());
        }
        out.flush();
        return bytes.toByteArray();
    }

    /** Encodes the changes into one segment (header plus stored payload). */
    public static byte[] encode(List<StateChange> changes, boolean compress) throws IOException {
        byte[] raw = rawPayload(changes);
        byte codec = SegmentFormat.CODEC_NONE;
        byte[] stored = raw;
        if (compress && raw.length > 0) {
            byte[] deflated = deflate(raw);
            if (deflated.length < raw.length) {
                codec = SegmentFormat.CODEC_DEFLATE;
                stored = deflated;
            }
        }
        ByteBuffer segment = ByteBuffer.allocate(SegmentFormat.SEGMENT_HEADER_SIZE + stored.length);
        segment.putInt(SegmentFormat.SEGMENT_MAGIC);
        segment.put(SegmentFormat.SEGMENT_VERSION);
        segment.put(codec);
        segment.putShort((short) 0);
        segment.putInt(changes.size());
        segment.putInt(raw.length);
        segment.putInt(stored.length);
        CRC32C crc = new CRC32C();
        crc.update(segment.array(), 0, SegmentFormat.CHECKSUMMED_HEADER_BYTES);
        crc.update(stored, 0, stored.length);
        segment.putInt((int) crc.getValue());
        segment.put(stored);
        return segment.array();
    }

    /** The 8-byte file header written once at offset 0 of every DSTL file. */
    public static byte[] fileHeader() {
        ByteBuffer header = ByteBuffer.allocate(SegmentFormat.FILE_HEADER_SIZE);
        header.putInt(SegmentFormat.FILE_MAGIC);
        header.put(SegmentFormat.FILE_VERSION);
        return header.array();
    }

    private static byte[] deflate(byte[] raw) {
        Deflater deflater = new Deflater(Deflater.BEST_SPEED, true);
        try {
            deflater.setInput(raw);
            deflater.finish();
            byte[] buffer = new byte[Math.max(64, raw.length + raw.length / 100 + 64)];
            int length = 0;
            while (!deflater.finished()) {
                if (length == buffer.length) {
                    buffer = Arrays.copyOf(buffer, buffer.length * 2);
                }
                length += deflater.deflate(buffer, length, buffer.length - length);
            }
            return Arrays.copyOf(buffer, length);
        } finally {
            deflater.end();
        }
    }
}
