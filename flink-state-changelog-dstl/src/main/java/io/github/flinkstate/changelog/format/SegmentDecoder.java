package io.github.flinkstate.changelog.format;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;
import org.apache.flink.runtime.state.changelog.StateChange;

/**
 * Decodes DSTL file headers and segments written by {@link SegmentEncoder}; every failure is a
 * {@link CorruptSegmentException} naming the file and the offset.
 *
 * <p>Thread safety: stateless.
 *
 * <p>Checks, in order: segment magic, version, codec, lengths, CRC32C of header and stored payload,
 * decompressed length, then that the payload holds exactly {@code count} well-formed changes.
 */
public final class SegmentDecoder {

    private SegmentDecoder() {}

    /** Reads and validates the 8-byte file header from a stream positioned at offset 0. */
    public static void readFileHeader(InputStream in, String file) throws IOException {
        byte[] header = new byte[SegmentFormat.FILE_HEADER_SIZE];
        readFully(in, header, file, 0, "file header");
        ByteBuffer buffer = ByteBuffer.wrap(header);
        int magic = buffer.getInt();
        if (magic != SegmentFormat.FILE_MAGIC) {
            throw new CorruptSegmentException(
                    file, 0, String.format("not a DSTL file (magic 0x%08x)", magic));
        }
        byte version = buffer.get();
        if (version != SegmentFormat.FILE_VERSION) {
            throw new CorruptSegmentException(file, 0, "unsupported DSTL file version " + version);
        }
    }

    /**
     * Verifies a whole file of {@code length} bytes read from offset 0: its header, and for every
     * segment its header fields and the CRC32C (payloads are not decompressed), and that the last
     * segment ends exactly at {@code length}. Used to check a downloaded copy before it is trusted.
     *
     * @return the offsets at which the segments start, ascending
     */
    public static long[] verifyFile(InputStream in, String file, long length) throws IOException {
        readFileHeader(in, file);
        long offset = SegmentFormat.FILE_HEADER_SIZE;
        byte[] header = new byte[SegmentFormat.SEGMENT_HEADER_SIZE];
        long[] starts = new long[16];
        int segments = 0;
        while (offset < length) {
            readFully(in, header, file, offset, "segment header");
            int storedLength = checkHeader(header, file, offset, length);
            byte[] stored = new byte[storedLength];
            readFully(in, stored, file, offset, "segment payload");
            checkCrc(header, stored, file, offset);
            if (segments == starts.length) {
                starts = Arrays.copyOf(starts, segments * 2);
            }
            starts[segments++] = offset;
            offset += SegmentFormat.SEGMENT_HEADER_SIZE + storedLength;
        }
        if (offset != length || in.read() != -1) {
            throw new CorruptSegmentException(
                    file, offset, "segments do not end at the file length " + length);
        }
        return Arrays.copyOf(starts, segments);
    }

    /**
     * Checks magic, version and lengths of a segment header; returns the stored length. The
     * header's checksum is checked with the payload, so before the payload is allocated its length
     * is checked against the file's ({@code fileLength}, -1 if unknown).
     */
    private static int checkHeader(byte[] header, String file, long offset, long fileLength)
            throws CorruptSegmentException {
        ByteBuffer buffer = ByteBuffer.wrap(header);
        int magic = buffer.getInt();
        if (magic != SegmentFormat.SEGMENT_MAGIC) {
            throw new CorruptSegmentException(
                    file, offset, String.format("bad segment magic 0x%08x", magic));
        }
        byte version = buffer.get();
        if (version != SegmentFormat.SEGMENT_VERSION) {
            throw new CorruptSegmentException(
                    file, offset, "unsupported segment version " + version);
        }
        buffer.get(); // codec
        buffer.getShort(); // flags, reserved
        int count = buffer.getInt();
        int rawLength = buffer.getInt();
        int storedLength = buffer.getInt();
        if (count < 0
                || rawLength < 0
                || storedLength < 0
                || rawLength > SegmentFormat.MAX_PAYLOAD_BYTES
                || storedLength > SegmentFormat.MAX_PAYLOAD_BYTES) {
            throw new CorruptSegmentException(
                    file,
                    offset,
                    String.format(
                            "invalid lengths (count %d, raw %d, stored %d)",
                            count, rawLength, storedLength));
        }
        long end = offset + SegmentFormat.SEGMENT_HEADER_SIZE + storedLength;
        if (fileLength >= 0 && end > fileLength) {
            throw new CorruptSegmentException(
                    file,
                    offset,
                    String.format(
                            "stored length %d reaches beyond the end of the file (%d bytes)",
                            storedLength, fileLength));
        }
        return storedLength;
    }

    private static void checkCrc(byte[] header, byte[] stored, String file, long offset)
            throws CorruptSegmentException {
        int expectedCrc = ByteBuffer.wrap(header).getInt(SegmentFormat.CHECKSUMMED_HEADER_BYTES);
        CRC32C crc = new CRC32C();
        crc.update(header, 0, SegmentFormat.CHECKSUMMED_HEADER_BYTES);
        crc.update(stored, 0, stored.length);
        if ((int) crc.getValue() != expectedCrc) {
            throw new CorruptSegmentException(
                    file,
                    offset,
                    String.format(
                            "checksum mismatch (stored 0x%08x, computed 0x%08x)",
                            expectedCrc, (int) crc.getValue()));
        }
    }

    /**
     * Reads one segment from a stream positioned at {@code offset} and returns its changes in
     * append order.
     */
    public static List<StateChange> readSegment(InputStream in, String file, long offset)
            throws IOException {
        try (SegmentChanges changes = openSegment(in, file, offset)) {
            List<StateChange> result = new ArrayList<>();
            while (changes.hasNext()) {
                result.add(changes.next());
            }
            return result;
        }
    }

    /**
     * Reads one segment's header and stored payload from a stream positioned at {@code offset},
     * checks the header and the CRC32C, and returns its changes for decoding one at a time ({@link
     * SegmentChanges}); the stream is not used after this returns.
     */
    public static SegmentChanges openSegment(InputStream in, String file, long offset)
            throws IOException {
        return openSegment(in, file, offset, -1);
    }

    /**
     * As {@link #openSegment(InputStream, String, long)} for a file of {@code fileLength} bytes
     * (-1: unknown), against which the segment's stored length is checked before it is read.
     */
    public static SegmentChanges openSegment(
            InputStream in, String file, long offset, long fileLength) throws IOException {
        byte[] header = new byte[SegmentFormat.SEGMENT_HEADER_SIZE];
        readFully(in, header, file, offset, "segment header");
        int storedLength = checkHeader(header, file, offset, fileLength);
        ByteBuffer buffer = ByteBuffer.wrap(header);
        byte codec = buffer.get(5);
        int count = buffer.getInt(8);
        int rawLength = buffer.getInt(12);
        boolean ordered = (buffer.getShort(6) & SegmentFormat.FLAG_KEY_GROUP_ORDER) != 0;
        byte[] stored = new byte[storedLength];
        readFully(in, stored, file, offset, "segment payload");
        checkCrc(header, stored, file, offset);
        if (codec == SegmentFormat.CODEC_NONE) {
            if (storedLength != rawLength) {
                throw new CorruptSegmentException(
                        file,
                        offset,
                        String.format(
                                "payload length %d, header says %d", storedLength, rawLength));
            }
            return new SegmentChanges(stored, false, ordered, count, rawLength, file, offset);
        } else if (codec == SegmentFormat.CODEC_DEFLATE) {
            return new SegmentChanges(stored, true, ordered, count, rawLength, file, offset);
        } else {
            throw new CorruptSegmentException(file, offset, "unknown codec " + codec);
        }
    }

    private static void readFully(
            InputStream in, byte[] target, String file, long offset, String what)
            throws IOException {
        try {
            new DataInputStream(in).readFully(target);
        } catch (EOFException e) {
            throw new CorruptSegmentException(
                    file, offset, "file is truncated inside the " + what, e);
        }
    }
}
