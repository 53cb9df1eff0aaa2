package io.github.flinkstate.changelog.format;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.flink.runtime.state.changelog.StateChange;

/**
 * The complete byte image of one DSTL file: the file header followed by one segment per change set,
 * in the order the change sets were added. Built once per batch, so that hedged attempts write
 * identical bytes to different files.
 *
 * <p>Thread safety: not thread-safe while building; immutable once {@link #bytes()} was called.
 *
 * <p>Invariants: (1) {@code offsets[i]} is the position of segment {@code i} in the file and {@code
 * offsets[0] == FILE_HEADER_SIZE}; (2) {@code offsets[i] + sizes[i] == offsets[i + 1]}; (3) the
 * image length equals the last offset plus the last size.
 */
public final class BatchFileImage {

    private final boolean compress;
    private byte[] buffer = new byte[4096];
    private int length;
    private final List<long[]> segments = new ArrayList<>();

    public BatchFileImage(boolean compress) {
        this.compress = compress;
        byte[] header = SegmentEncoder.fileHeader();
        append(header);
    }

    /** Appends one segment for the given changes and returns its index. */
    public int addSegment(List<StateChange> changes) throws IOException {
        return addEncodedSegment(SegmentEncoder.encode(changes, compress));
    }

    /**
     * Appends a segment that {@link SegmentEncoder#encode} produced (with this image's compression
     * setting) and returns its index.
     */
    public int addEncodedSegment(byte[] segment) {
        segments.add(new long[] {length, segment.length});
        append(segment);
        return segments.size() - 1;
    }

    public long offsetOf(int segment) {
        return segments.get(segment)[0];
    }

    public long sizeOf(int segment) {
        return segments.get(segment)[1];
    }

    public int segmentCount() {
        return segments.size();
    }

    public int length() {
        return length;
    }

    /** The file image; do not modify. */
    public byte[] bytes() {
        if (buffer.length != length) {
            buffer = Arrays.copyOf(buffer, length);
        }
        return buffer;
    }

    private void append(byte[] bytes) {
        if (length + bytes.length > buffer.length) {
            buffer = Arrays.copyOf(buffer, Math.max(buffer.length * 2, length + bytes.length));
        }
        System.arraycopy(bytes, 0, buffer, length, bytes.length);
        length += bytes.length;
    }
}
