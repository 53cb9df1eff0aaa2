package io.github.flinkstate.disagg.engine.sst;

import java.io.IOException;
import java.util.Arrays;

/**
 * A standard Bloom filter over whole keys, using double hashing of one 64-bit hash.
 *
 * <p>Serialized form (inside the bloom block, see docs/format/disagg-sst.md): u8 number of probes,
 * then the bit array as bytes (bit {@code i} is bit {@code i % 8} of byte {@code i / 8}). An empty
 * bit array means "may contain everything".
 *
 * <p>Thread safety: immutable after {@link #build} / {@link #decode}.
 */
public final class BloomFilter {

    private final int probes;
    private final byte[] bits;

    private BloomFilter(int probes, byte[] bits) {
        this.probes = probes;
        this.bits = bits;
    }

    /** Builds a filter for the given key hashes with about {@code bitsPerKey} bits per key. */
    public static BloomFilter build(long[] hashes, int count, int bitsPerKey) {
        if (count == 0 || bitsPerKey <= 0) {
            return new BloomFilter(0, new byte[0]);
        }
        int probes = Math.max(1, Math.min(30, (int) Math.round(bitsPerKey * 0.69)));
        long nbits = Math.max(64, (long) count * bitsPerKey);
        byte[] bits = new byte[(int) Math.min(Integer.MAX_VALUE - 8, (nbits + 7) / 8)];
        long totalBits = (long) bits.length * 8;
        for (int i = 0; i < count; i++) {
            long h = hashes[i];
            long delta = (h >>> 33) | (h << 31);
            for (int p = 0; p < probes; p++) {
                long bit = Long.remainderUnsigned(h, totalBits);
                bits[(int) (bit >>> 3)] |= (byte) (1 << (bit & 7));
                h += delta;
            }
        }
        return new BloomFilter(probes, bits);
    }

    public boolean mightContain(byte[] key) {
        if (bits.length == 0) {
            return true;
        }
        long h = hash(key);
        long delta = (h >>> 33) | (h << 31);
        long totalBits = (long) bits.length * 8;
        for (int p = 0; p < probes; p++) {
            long bit = Long.remainderUnsigned(h, totalBits);
            if ((bits[(int) (bit >>> 3)] & (1 << (bit & 7))) == 0) {
                return false;
            }
            h += delta;
        }
        return true;
    }

    public void encode(ByteWriter out) {
        out.u8(probes);
        out.raw(bits, 0, bits.length);
    }

    public static BloomFilter decode(byte[] payload) throws IOException {
        if (payload.length < 1) {
            throw new IOException("empty bloom block");
        }
        return new BloomFilter(payload[0] & 0xFF, Arrays.copyOfRange(payload, 1, payload.length));
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
