package io.github.flinkstate.changelog.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32C;
import org.apache.flink.runtime.state.changelog.StateChange;
import org.junit.jupiter.api.Test;

/** Round trips, the golden header bytes and corruption detection of the segment format. */
class SegmentFormatTest {

    private static List<StateChange> sampleChanges() {
        List<StateChange> changes = new ArrayList<>();
        changes.add(StateChange.ofMetadataChange("meta".getBytes(StandardCharsets.UTF_8)));
        for (int i = 0; i < 50; i++) {
            changes.add(
                    StateChange.ofDataChange(
                            i % 7, ("value-" + i).getBytes(StandardCharsets.UTF_8)));
        }
        changes.add(StateChange.ofDataChange(3, new byte[0]));
        return changes;
    }

    /** The expected read order: metadata first, then by key group, append order within one. */
    private static List<StateChange> byKeyGroup(List<StateChange> changes) {
        List<StateChange> sorted = new ArrayList<>(changes);
        sorted.sort((a, b) -> Integer.compare(a.getKeyGroup(), b.getKeyGroup()));
        return sorted;
    }

    private static void assertSameChanges(List<StateChange> actual, List<StateChange> expected) {
        assertThat(actual).hasSameSizeAs(expected);
        for (int i = 0; i < expected.size(); i++) {
            assertThat(actual.get(i).getKeyGroup()).isEqualTo(expected.get(i).getKeyGroup());
            assertThat(actual.get(i).getChange()).isEqualTo(expected.get(i).getChange());
        }
    }

    @Test
    void roundTrip_compressed() throws IOException {
        List<StateChange> changes = sampleChanges();
        byte[] segment = SegmentEncoder.encode(changes, true);
        assertThat(segment[5]).isEqualTo(SegmentFormat.CODEC_DEFLATE);
        assertSameChanges(
                SegmentDecoder.readSegment(new ByteArrayInputStream(segment), "f", 0),
                byKeyGroup(changes));
    }

    @Test
    void roundTrip_uncompressed() throws IOException {
        List<StateChange> changes = sampleChanges();
        byte[] segment = SegmentEncoder.encode(changes, false);
        assertThat(segment[5]).isEqualTo(SegmentFormat.CODEC_NONE);
        assertSameChanges(
                SegmentDecoder.readSegment(new ByteArrayInputStream(segment), "f", 0),
                byKeyGroup(changes));
    }

    @Test
    void changes_areStoredMetadataFirst_thenByKeyGroup_inAppendOrderWithinAGroup()
            throws IOException {
        List<StateChange> appended =
                List.of(
                        StateChange.ofDataChange(3, bytes("a")),
                        StateChange.ofMetadataChange(bytes("m1")),
                        StateChange.ofDataChange(1, bytes("b")),
                        StateChange.ofDataChange(3, bytes("c")),
                        StateChange.ofDataChange(1, bytes("d")),
                        StateChange.ofMetadataChange(bytes("m2")));
        for (boolean compress : new boolean[] {true, false}) {
            byte[] segment = SegmentEncoder.encode(appended, compress);
            List<String> read = new ArrayList<>();
            for (StateChange c :
                    SegmentDecoder.readSegment(new ByteArrayInputStream(segment), "f", 0)) {
                read.add(c.getKeyGroup() + ":" + new String(c.getChange(), StandardCharsets.UTF_8));
            }
            assertThat(read).containsExactly("-1:m1", "-1:m2", "1:b", "1:d", "3:a", "3:c");
        }
    }

    @Test
    void lazyDecode_reportsAChangeCountLargerThanThePayload() throws IOException {
        // a writer bug, not damage (the checksum matches): the header promises one change more
        List<StateChange> changes = List.of(StateChange.ofDataChange(1, bytes("x")));
        byte[] raw = SegmentEncoder.rawPayload(changes);
        byte[] segment = SegmentEncoder.encode(changes, false);
        ByteBuffer.wrap(segment).putInt(8, 2);
        CRC32C crc = new CRC32C();
        crc.update(segment, 0, SegmentFormat.CHECKSUMMED_HEADER_BYTES);
        crc.update(raw, 0, raw.length);
        ByteBuffer.wrap(segment)
                .putInt(SegmentFormat.CHECKSUMMED_HEADER_BYTES, (int) crc.getValue());
        assertThatThrownBy(
                        () -> SegmentDecoder.readSegment(new ByteArrayInputStream(segment), "g", 8))
                .isInstanceOf(CorruptSegmentException.class)
                .hasMessageContaining("'g' at offset 8")
                .hasMessageContaining("payload ends inside change 1");
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void incompressibleData_isStoredPlain() throws IOException {
        byte[] random = new byte[4096];
        new Random(42).nextBytes(random);
        byte[] segment = SegmentEncoder.encode(List.of(StateChange.ofDataChange(1, random)), true);
        assertThat(segment[5]).isEqualTo(SegmentFormat.CODEC_NONE);
        assertThat(segment.length).isEqualTo(SegmentFormat.SEGMENT_HEADER_SIZE + 8 + 4096);
    }

    @Test
    void goldenBytes_ofOneUncompressedChange() throws IOException {
        byte[] segment =
                SegmentEncoder.encode(
                        List.of(StateChange.ofDataChange(5, new byte[] {0x41, 0x42})), false);
        // magic "SEGM", version 1, codec 0, flags 1 (key-group order), count 1, raw 10, stored 10
        byte[] header = Arrays.copyOf(segment, 20);
        assertThat(header)
                .containsExactly(
                        0x53, 0x45, 0x47, 0x4D, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 10, 0, 0, 0, 10);
        // CRC32C of header bytes 0..19 and the payload (worked example in dstl-segment.md)
        assertThat(Arrays.copyOfRange(segment, 20, 24))
                .containsExactly((byte) 0xC9, 0x70, (byte) 0xF2, 0x04);
        // payload: key group 5, length 2, "AB"
        assertThat(Arrays.copyOfRange(segment, 24, 34))
                .containsExactly(0, 0, 0, 5, 0, 0, 0, 2, 0x41, 0x42);
        assertThat(SegmentEncoder.fileHeader()).containsExactly(0x44, 0x53, 0x54, 0x4C, 1, 0, 0, 0);
    }

    @Test
    void flippedPayloadByte_failsChecksumNamingFileAndOffset() throws IOException {
        byte[] segment = SegmentEncoder.encode(sampleChanges(), true);
        segment[segment.length - 3] ^= 0x10;
        assertThatThrownBy(
                        () ->
                                SegmentDecoder.readSegment(
                                        new ByteArrayInputStream(segment), "dfs://x/file-1", 4711))
                .isInstanceOf(CorruptSegmentException.class)
                .hasMessageContaining("dfs://x/file-1")
                .hasMessageContaining("offset 4711")
                .hasMessageContaining("checksum mismatch");
    }

    @Test
    void flippedHeaderByte_isDetected() throws IOException {
        byte[] segment = SegmentEncoder.encode(sampleChanges(), false);
        segment[9] ^= 0x01; // change count
        assertThatThrownBy(
                        () -> SegmentDecoder.readSegment(new ByteArrayInputStream(segment), "f", 8))
                .isInstanceOf(CorruptSegmentException.class)
                .hasMessageContaining("offset 8");
    }

    @Test
    void truncatedSegment_failsNamingFileAndOffset() throws IOException {
        byte[] segment = SegmentEncoder.encode(sampleChanges(), true);
        byte[] truncated = Arrays.copyOf(segment, segment.length - 5);
        assertThatThrownBy(
                        () ->
                                SegmentDecoder.readSegment(
                                        new ByteArrayInputStream(truncated), "file-2", 123))
                .isInstanceOf(CorruptSegmentException.class)
                .hasMessageContaining("file-2")
                .hasMessageContaining("offset 123")
                .hasMessageContaining("truncated");
    }

    @Test
    void badMagic_andUnknownVersion_areRejected() throws IOException {
        byte[] segment = SegmentEncoder.encode(sampleChanges(), false);
        byte[] badMagic = segment.clone();
        badMagic[0] = 0;
        assertThatThrownBy(
                        () ->
                                SegmentDecoder.readSegment(
                                        new ByteArrayInputStream(badMagic), "f", 0))
                .hasMessageContaining("bad segment magic");
        byte[] fileHeader = SegmentEncoder.fileHeader();
        fileHeader[4] = 9;
        assertThatThrownBy(
                        () ->
                                SegmentDecoder.readFileHeader(
                                        new ByteArrayInputStream(fileHeader), "f"))
                .hasMessageContaining("unsupported DSTL file version 9");
    }

    @Test
    void batchImage_offsetsPointAtSegments() throws IOException {
        BatchFileImage image = new BatchFileImage(true);
        List<StateChange> first = sampleChanges();
        List<StateChange> second = List.of(StateChange.ofDataChange(9, new byte[] {1, 2, 3}));
        int a = image.addSegment(first);
        int b = image.addSegment(second);
        assertThat(image.offsetOf(a)).isEqualTo(SegmentFormat.FILE_HEADER_SIZE);
        assertThat(image.offsetOf(b)).isEqualTo(image.offsetOf(a) + image.sizeOf(a));
        assertThat(image.length()).isEqualTo((int) (image.offsetOf(b) + image.sizeOf(b)));
        byte[] bytes = image.bytes();
        SegmentDecoder.readFileHeader(new ByteArrayInputStream(bytes), "f");
        ByteArrayInputStream in = new ByteArrayInputStream(bytes);
        in.skip(image.offsetOf(b));
        assertSameChanges(SegmentDecoder.readSegment(in, "f", image.offsetOf(b)), second);
    }
}
