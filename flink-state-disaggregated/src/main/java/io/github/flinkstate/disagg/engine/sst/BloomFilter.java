package io.github.flinkstate.disagg.engine.sst;

import java.io.IOException;
import java.util.Arrays;

/**
 * A Bloom filter over 64-bit key hashes, in one of two layouts:
 *
 * <ul>
 *   <li><b>standard</b> (SST versions 1-4): probe {@code p} tests bit {@code (h + p * delta) mod
 *       nbits} of the whole array, one random memory access per probe;
 *   <li><b>blocked</b> (SST version 5 and later): the array is a sequence of 64-byte blocks; the
 *       high 32 bits of the hash pick one block, and every probe tests a bit inside it, so a lookup
 *       touches one cache line and needs no division.
 * </ul>
 *
 * <p>Serialized form (inside the bloom block, see docs/format/disagg-sst.md): u8 number of probes,
 * then the bit array as bytes (bit {@code i} is bit {@code i % 8} of byte {@code i / 8}); the file
 * version says which layout. An empty bit array means "may contain everything".
 *
 * <p>Thread safety: immutable after {@link #build} / {@link #decode}.
 */
public final class BloomFilter {

    /** Bytes per block of the blocked layout (one cache line). */
    public static final int BLOCK_BYTES = 64;

    private static final int BLOCK_BITS_MASK = BLOCK_BYTES * 8 - 1;

    private final int probes;
    private final byte[] bits;
    private final boolean blocked;

    private BloomFilter(int probes, byte[] bits, boolean blocked) {
        this.probes = probes;
        this.bits = bits;
        this.blocked = blocked;
    }

    /**
     * Builds a filter in the standard or the blocked layout for the given key hashes, with about
     * {@code bitsPerKey} bits per key.
     */
    public static BloomFilter build(long[] hashes, int count, int bitsPerKey, boolean blocked) {
        if (count == 0 || bitsPerKey <= 0) {
            return new BloomFilter(0, new byte[0], blocked);
        }
        int probes = Math.max(1, Math.min(30, (int) Math.round(bitsPerKey * 0.69)));
        byte[] bits = new byte[arrayBytes((long) count * bitsPerKey, blocked)];
        BloomFilter f = new BloomFilter(probes, bits, blocked);
        for (int i = 0; i < count; i++) {
            f.set(hashes[i]);
        }
        return f;
    }

    /**
     * Bytes of the bit array for about {@code bitsWanted} bits: at least 8, whole 64-byte blocks in
     * the blocked layout, and never above what a Java array holds (the cap stays a whole number of
     * blocks, or the reader would reject the filter).
     */
    static int arrayBytes(long bitsWanted, boolean blocked) {
        long nbytes = (Math.max(64, bitsWanted) + 7) / 8;
        long cap = Integer.MAX_VALUE - BLOCK_BYTES;
        if (blocked) {
            nbytes = (nbytes + BLOCK_BYTES - 1) / BLOCK_BYTES * BLOCK_BYTES;
            cap = cap / BLOCK_BYTES * BLOCK_BYTES;
        }
        return (int) Math.min(cap, nbytes);
    }

    private void set(long h) {
        probe(h, true);
    }

    /** Blocked layout: the first byte of the block the hash's high 32 bits select. */
    private int blockStart(long h) {
        long blocks = bits.length / BLOCK_BYTES;
        return (int) (((h >>> 32) * blocks) >>> 32) * BLOCK_BYTES;
    }

    public boolean mightContain(byte[] key) {
        return bits.length == 0 || mightContainHash(hash(key));
    }

    /** As {@link #mightContain(byte[])} for a key whose {@link #hash(byte[])} is {@code h}. */
    public boolean mightContainHash(long h) {
        return bits.length == 0 || probe(h, false);
    }

    /**
     * Visits the bits of hash {@code h}: sets them ({@code set}) and returns true, or tests them
     * and returns whether all are set.
     */
    private boolean probe(long h, boolean set) {
        if (blocked) {
            int base = blockStart(h);
            long g = h * 0x9E3779B97F4A7C15L;
            int a = (int) g;
            int b = (int) (g >>> 32) | 1;
            for (int p = 0; p < probes; p++) {
                int bit = (a + p * b) & BLOCK_BITS_MASK;
                if (!visit(base + (bit >>> 3), 1 << (bit & 7), set)) {
                    return false;
                }
            }
            return true;
        }
        long delta = (h >>> 33) | (h << 31);
        long totalBits = (long) bits.length * 8;
        for (int p = 0; p < probes; p++) {
            long bit = Long.remainderUnsigned(h, totalBits);
            if (!visit((int) (bit >>> 3), 1 << (bit & 7), set)) {
                return false;
            }
            h += delta;
        }
        return true;
    }

    private boolean visit(int index, int mask, boolean set) {
        if (set) {
            bits[index] |= (byte) mask;
            return true;
        }
        return (bits[index] & mask) != 0;
    }

    public void encode(ByteWriter out) {
        out.u8(probes);
        out.raw(bits, 0, bits.length);
    }

    /** A filter of the given layout from its serialized form. */
    public static BloomFilter decode(byte[] payload, boolean blocked) throws IOException {
        if (payload.length < 1) {
            throw new IOException("empty bloom block");
        }
        int bytes = payload.length - 1;
        if (blocked && bytes % BLOCK_BYTES != 0) {
            throw new IOException(
                    "blocked bloom filter of "
                            + bytes
                            + " bytes is not a whole number of "
                            + BLOCK_BYTES
                            + "-byte blocks");
        }
        return new BloomFilter(
                payload[0] & 0xFF, Arrays.copyOfRange(payload, 1, payload.length), blocked);
    }

    public int sizeBytes() {
        return bits.length + 1;
    }

    /** 64-bit hash of a key (a multiply-xorshift mix over 8-byte words; frozen). */
    public static long hash(byte[] key) {
        return hash(key, key.length);
    }

    /** {@link #hash(byte[])} of the first {@code length} bytes of {@code key}. */
    public static long hash(byte[] key, int length) {
        long h = 0x9E3779B97F4A7C15L ^ length;
        int i = 0;
        for (; i + 8 <= length; i += 8) {
            long w = 0;
            for (int j = 0; j < 8; j++) {
                w = (w << 8) | (key[i + j] & 0xFF);
            }
            h = mix(h ^ w);
        }
        long w = 0;
        for (; i < length; i++) {
            w = (w << 8) | (key[i] & 0xFF);
        }
        return mix(h ^ w ^ 0xFF);
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
