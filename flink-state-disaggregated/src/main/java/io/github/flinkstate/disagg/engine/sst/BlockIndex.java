package io.github.flinkstate.disagg.engine.sst;

import java.io.IOException;
import java.util.Arrays;

/**
 * The parsed index block of an open SST file (docs/format/disagg-sst.md): for every data block its
 * last key, offset and stored length, packed into four arrays instead of one key array and one
 * handle object per block. A reader keeps it for as long as it is open and charges it to the block
 * cache's memory, so its size matters: about 16 bytes per block plus the keys, against about 56 for
 * an array of keys and an array of handle records.
 *
 * <p>Invariants: the last keys are strictly increasing (checked by the writer, not re-checked
 * here); {@code keyEnds[i]} is the end of key {@code i} in {@code keys}, key {@code i} starting at
 * {@code keyEnds[i - 1]} (0 for the first).
 *
 * <p>Thread safety: immutable.
 */
final class BlockIndex {

    private final byte[] keys;
    private final int[] keyEnds;
    private final long[] offsets;
    private final int[] lengths;

    private BlockIndex(byte[] keys, int[] keyEnds, long[] offsets, int[] lengths) {
        this.keys = keys;
        this.keyEnds = keyEnds;
        this.offsets = offsets;
        this.lengths = lengths;
    }

    /** Parses an index block payload: {@code (bytes lastKey, varint offset, varint length)*}. */
    static BlockIndex decode(byte[] payload) throws IOException {
        ByteReader r = new ByteReader(payload, 0, payload.length);
        byte[] keys = new byte[Math.max(16, payload.length)];
        int[] keyEnds = new int[16];
        long[] offsets = new long[16];
        int[] lengths = new int[16];
        int n = 0;
        int keyBytes = 0;
        while (r.hasRemaining()) {
            byte[] key = r.bytes();
            if (n == keyEnds.length) {
                keyEnds = Arrays.copyOf(keyEnds, n * 2);
                offsets = Arrays.copyOf(offsets, n * 2);
                lengths = Arrays.copyOf(lengths, n * 2);
            }
            System.arraycopy(key, 0, keys, keyBytes, key.length); // keys fit: they came from it
            keyBytes += key.length;
            keyEnds[n] = keyBytes;
            offsets[n] = r.varint();
            lengths[n] = r.varint32();
            n++;
        }
        return new BlockIndex(
                Arrays.copyOf(keys, keyBytes),
                Arrays.copyOf(keyEnds, n),
                Arrays.copyOf(offsets, n),
                Arrays.copyOf(lengths, n));
    }

    int size() {
        return offsets.length;
    }

    BlockHandle handle(int i) {
        return new BlockHandle(offsets[i], lengths[i]);
    }

    long offset(int i) {
        return offsets[i];
    }

    /** Offset just after block {@code i} and its CRC. */
    long end(int i) {
        return offsets[i] + lengths[i] + SstFormat.BLOCK_CRC_BYTES;
    }

    /** The offsets of all blocks (a copy). */
    long[] offsets() {
        return offsets.clone();
    }

    /** Index of the first block whose last key is >= {@code key}, or {@link #size()} if none. */
    int find(byte[] key) {
        int lo = 0;
        int hi = keyEnds.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            int from = mid == 0 ? 0 : keyEnds[mid - 1];
            if (Arrays.compareUnsigned(keys, from, keyEnds[mid], key, 0, key.length) < 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** Approximate heap bytes: the four arrays with their headers. */
    long heapBytes() {
        return 4 * 16L
                + keys.length
                + 4L * keyEnds.length
                + 8L * offsets.length
                + 4L * lengths.length;
    }
}
