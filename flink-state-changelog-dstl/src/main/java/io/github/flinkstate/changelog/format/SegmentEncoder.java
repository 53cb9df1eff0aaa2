package io.github.flinkstate.changelog.format;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
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
 * smaller, so incompressible data never grows by more than the header; (3) the payload holds the
 * changes in {@link #replayOrder replay order}: metadata changes first, then the data changes
 * grouped by ascending key group, each group in append order.
 */
public final class SegmentEncoder {

    private SegmentEncoder() {}

    /**
     * The order in which a change set is stored and replayed: metadata changes first, then data
     * changes by ascending key group, in append order within a key group (a stable sort by key
     * group, metadata being key group -1). Changes of different key groups are independent, and a
     * state's registration precedes its data changes in the append order, so a replay in this order
     * yields the same state; Flink's own DSTL stores change sets in the same order. It matters for
     * the restore time: replaying a key group's changes together writes nearly sorted keys into the
     * delegate (RocksDB's memtable inserts sequential keys much faster), where append order
     * interleaves every key group of the subtask.
     */
    public static List<StateChange> replayOrder(List<StateChange> changes) {
        int min = Integer.MAX_VALUE;
        int max = Integer.MIN_VALUE;
        boolean sorted = true;
        int previous = Integer.MIN_VALUE;
        for (StateChange change : changes) {
            int keyGroup = change.getKeyGroup();
            min = Math.min(min, keyGroup);
            max = Math.max(max, keyGroup);
            sorted &= keyGroup >= previous;
            previous = keyGroup;
        }
        if (sorted) {
            return changes;
        }
        if ((long) max - min > COUNTING_SORT_MAX_RANGE) {
            List<StateChange> ordered = new ArrayList<>(changes);
            ordered.sort(Comparator.comparingInt(StateChange::getKeyGroup));
            return ordered;
        }
        // counting sort: stable, linear (the upload thread sorts every change set it encodes)
        int[] start = new int[max - min + 2];
        for (StateChange change : changes) {
            start[change.getKeyGroup() - min + 1]++;
        }
        for (int i = 1; i < start.length; i++) {
            start[i] += start[i - 1];
        }
        StateChange[] ordered = new StateChange[changes.size()];
        for (StateChange change : changes) {
            ordered[start[change.getKeyGroup() - min]++] = change;
        }
        return Arrays.asList(ordered);
    }

    /** Largest key-group span sorted by counting (Flink's key groups are at most 32768). */
    private static final int COUNTING_SORT_MAX_RANGE = 1 << 16;

    /**
     * Serializes the raw (uncompressed) payload: key group, length and bytes per change, in the
     * given order.
     */
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
        byte[] raw = rawPayload(replayOrder(changes));
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
        segment.putShort(SegmentFormat.FLAG_KEY_GROUP_ORDER);
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
