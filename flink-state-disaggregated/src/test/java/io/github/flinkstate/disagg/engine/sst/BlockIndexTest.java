package io.github.flinkstate.disagg.engine.sst;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The packed index of an open file: decoding, the block search, handles and its heap size. */
class BlockIndexTest {

    private static final byte[][] LAST_KEYS = {
        {0, 1, 5}, {0, 1, 5, 0}, {0, 2}, {0, 2, (byte) 0xff}, {1, 0, 0, 0, 0, 0, 7}
    };

    private static byte[] payload() {
        ByteWriter w = new ByteWriter(64);
        for (int i = 0; i < LAST_KEYS.length; i++) {
            w.bytes(LAST_KEYS[i]);
            w.varint(1000L * i + 3);
            w.varint(900 + i);
        }
        return w.toByteArray();
    }

    @Test
    void findsTheFirstBlockWhoseLastKeyIsAtLeastTheKey_likeASearchOverTheKeys() throws Exception {
        BlockIndex index = BlockIndex.decode(payload());
        assertThat(index.size()).isEqualTo(LAST_KEYS.length);
        byte[][] probes = {
            {},
            {0},
            {0, 1},
            {0, 1, 5},
            {0, 1, 5, 0},
            {0, 1, 5, 0, 0},
            {0, 1, 6},
            {0, 2},
            {0, 2, 0},
            {0, 2, (byte) 0xff},
            {0, 3},
            {1, 0, 0, 0, 0, 0, 7},
            {1, 0, 0, 0, 0, 0, 8},
            {(byte) 0x80}
        };
        for (byte[] probe : probes) {
            int expected = LAST_KEYS.length;
            for (int i = 0; i < LAST_KEYS.length; i++) {
                if (Arrays.compareUnsigned(LAST_KEYS[i], probe) >= 0) {
                    expected = i;
                    break;
                }
            }
            assertThat(index.find(probe)).as(Arrays.toString(probe)).isEqualTo(expected);
        }
    }

    @Test
    void handlesOffsetsAndEnds_comeBackAsWritten() throws Exception {
        BlockIndex index = BlockIndex.decode(payload());
        for (int i = 0; i < LAST_KEYS.length; i++) {
            assertThat(index.handle(i)).isEqualTo(new BlockHandle(1000L * i + 3, 900 + i));
            assertThat(index.offset(i)).isEqualTo(1000L * i + 3);
            assertThat(index.end(i)).isEqualTo(index.handle(i).end());
        }
        assertThat(index.offsets()).containsExactly(3, 1003, 2003, 3003, 4003);
    }

    @Test
    void anEmptyIndexHasNoBlocks_andATruncatedOneFails() throws Exception {
        BlockIndex empty = BlockIndex.decode(new byte[0]);
        assertThat(empty.size()).isZero();
        assertThat(empty.find(new byte[] {1})).isZero();
        byte[] p = payload();
        assertThatThrownBy(() -> BlockIndex.decode(Arrays.copyOf(p, p.length - 1)))
                .isInstanceOf(IOException.class);
    }

    @Test
    void keepsSixteenBytesPerBlockPlusTheKeys() throws Exception {
        BlockIndex index = BlockIndex.decode(payload());
        long keyBytes = Arrays.stream(LAST_KEYS).mapToLong(k -> k.length).sum();
        assertThat(index.heapBytes()).isEqualTo(64 + keyBytes + 16L * LAST_KEYS.length);
    }
}
