package io.github.flinkstate.changelog.read;

import static io.github.flinkstate.changelog.testutils.Changes.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.changelog.format.BatchFileImage;
import io.github.flinkstate.changelog.format.SegmentEncoder;
import io.github.flinkstate.changelog.format.SegmentFormat;
import io.github.flinkstate.changelog.testutils.Changes;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.changelog.ChangelogStateHandleStreamImpl;
import org.apache.flink.runtime.state.changelog.StateChange;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The reader's order: segments written in key-group order are merged by key group across the handle
 * (metadata first, every key group's changes in append order over all segments), and a segment in
 * plain append order (flags 0, written before the key-group order) is read on its own, so merging
 * never moves a change across it.
 */
class KeyGroupOrderReadTest {

    private static final KeyGroupRange RANGE = KeyGroupRange.of(0, 9);

    @TempDir File tmp;

    private int files;

    @Test
    void orderedSegments_areMergedByKeyGroup_keepingAppendOrderWithinEachGroup() throws Exception {
        List<Tuple2<StreamStateHandle, Long>> segments = new ArrayList<>();
        // two segments in one file, a third in another file
        BatchFileImage image = new BatchFileImage(true);
        int a =
                image.addSegment(
                        List.of(
                                change(2, "a1"),
                                StateChange.ofMetadataChange(bytes("m1")),
                                change(1, "a2"),
                                change(2, "a3")));
        int b = image.addSegment(List.of(change(1, "b1"), change(3, "b2"), change(2, "b3")));
        FileStateHandle first = write(image.bytes());
        segments.add(Tuple2.of(first, image.offsetOf(a)));
        segments.add(Tuple2.of(first, image.offsetOf(b)));
        BatchFileImage other = new BatchFileImage(false);
        int c =
                other.addSegment(
                        List.of(
                                change(3, "c1"),
                                StateChange.ofMetadataChange(bytes("m2")),
                                change(1, "c2")));
        segments.add(Tuple2.of(write(other.bytes()), other.offsetOf(c)));

        assertThat(read(segments))
                .containsExactly(
                        "-1:m1", "-1:m2", "1:a2", "1:b1", "1:c2", "2:a1", "2:a3", "2:b3", "3:b2",
                        "3:c1");
    }

    @Test
    void appendOrderSegment_isReadAlone_betweenMergedWindows() throws Exception {
        BatchFileImage before = new BatchFileImage(false);
        int x = before.addSegment(List.of(change(2, "x1"), change(1, "x2")));
        FileStateHandle beforeFile = write(before.bytes());
        // a segment as the previous writer version stored it: append order, flags 0
        FileStateHandle legacy =
                write(
                        concat(
                                SegmentEncoder.fileHeader(),
                                appendOrderSegment(List.of(change(3, "l1"), change(1, "l2")))));
        BatchFileImage after = new BatchFileImage(false);
        int y = after.addSegment(List.of(change(1, "y1")));
        FileStateHandle afterFile = write(after.bytes());

        List<Tuple2<StreamStateHandle, Long>> segments =
                List.of(
                        Tuple2.of(beforeFile, before.offsetOf(x)),
                        Tuple2.of(legacy, (long) SegmentFormat.FILE_HEADER_SIZE),
                        Tuple2.of(afterFile, after.offsetOf(y)));
        List<String> read = read(segments);
        assertThat(read).containsExactly("1:x2", "2:x1", "3:l1", "1:l2", "1:y1");
        assertThat(Changes.perKeyGroup(read).get("1")).containsExactly("1:x2", "1:l2", "1:y1");
    }

    @Test
    void mergeWindows_areBoundedInSegments_andReadOneAfterAnother() throws Exception {
        List<Tuple2<StreamStateHandle, Long>> segments = new ArrayList<>();
        for (String set : new String[] {"a", "b", "c"}) {
            BatchFileImage image = new BatchFileImage(true);
            int i = image.addSegment(List.of(change(2, set + "1"), change(1, set + "2")));
            segments.add(Tuple2.of(write(image.bytes()), image.offsetOf(i)));
        }
        ChangelogStateHandleStreamImpl handle =
                new ChangelogStateHandleStreamImpl(segments, RANGE, 1, 1, "dfs-batched");
        // windows of two segments: {a, b} merged, then {c}
        assertThat(Changes.read(new DfsChangelogReader(null, null, Long.MAX_VALUE, 2), handle))
                .containsExactly("1:a2", "1:b2", "2:a1", "2:b1", "1:c2", "2:c1");
        // a byte bound smaller than one segment: every segment alone, never an empty window
        assertThat(Changes.read(new DfsChangelogReader(null, null, 1, 256), handle))
                .containsExactly("1:a2", "2:a1", "1:b2", "2:b1", "1:c2", "2:c1");
    }

    private List<String> read(List<Tuple2<StreamStateHandle, Long>> segments) throws Exception {
        ChangelogStateHandleStreamImpl handle =
                new ChangelogStateHandleStreamImpl(segments, RANGE, 1, 1, "dfs-batched");
        return Changes.read(new DfsChangelogReader(null, null), handle);
    }

    private static StateChange change(int keyGroup, String value) {
        return StateChange.ofDataChange(keyGroup, bytes(value));
    }

    private FileStateHandle write(byte[] content) throws IOException {
        File file = new File(tmp, "dstl-" + files++);
        Files.write(file.toPath(), content);
        return new FileStateHandle(new Path(file.toURI()), content.length);
    }

    /** An uncompressed segment with flags 0 and the changes in the given (append) order. */
    private static byte[] appendOrderSegment(List<StateChange> changes) throws IOException {
        byte[] raw = SegmentEncoder.rawPayload(changes);
        ByteBuffer segment = ByteBuffer.allocate(SegmentFormat.SEGMENT_HEADER_SIZE + raw.length);
        segment.putInt(SegmentFormat.SEGMENT_MAGIC);
        segment.put(SegmentFormat.SEGMENT_VERSION);
        segment.put(SegmentFormat.CODEC_NONE);
        segment.putShort((short) 0);
        segment.putInt(changes.size());
        segment.putInt(raw.length);
        segment.putInt(raw.length);
        CRC32C crc = new CRC32C();
        crc.update(segment.array(), 0, SegmentFormat.CHECKSUMMED_HEADER_BYTES);
        crc.update(raw, 0, raw.length);
        segment.putInt((int) crc.getValue());
        segment.put(raw);
        return segment.array();
    }

    private static byte[] concat(byte[] a, byte[] b) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(a);
        out.writeBytes(b);
        return out.toByteArray();
    }
}
