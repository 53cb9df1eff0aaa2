package io.github.flinkstate.disagg.engine.key;

import java.util.Arrays;

/**
 * Byte-string helpers shared by all layers: unsigned ordering, successors and hex rendering.
 *
 * <p>Thread safety: stateless, all methods are pure functions.
 *
 * <p>Conventions:
 *
 * <ol>
 *   <li>Keys are ordered by unsigned lexicographic comparison ({@link #compare}).
 *   <li>A "limit" is an exclusive upper bound; {@code null} as a limit means "unbounded".
 * </ol>
 */
public final class Bytes {

    public static final byte[] EMPTY = new byte[0];

    private Bytes() {}

    /** Unsigned lexicographic comparison. */
    public static int compare(byte[] a, byte[] b) {
        return Arrays.compareUnsigned(a, b);
    }

    /** Compares a key with an exclusive limit where {@code null} is +infinity. */
    public static boolean lessThanLimit(byte[] key, byte[] limit) {
        return limit == null || compare(key, limit) < 0;
    }

    /** Smaller of two limits where {@code null} is +infinity. */
    public static byte[] minLimit(byte[] a, byte[] b) {
        if (a == null) {
            return b;
        }
        if (b == null) {
            return a;
        }
        return compare(a, b) <= 0 ? a : b;
    }

    /** Larger of two limits where {@code null} is +infinity. */
    public static byte[] maxLimit(byte[] a, byte[] b) {
        if (a == null || b == null) {
            return null;
        }
        return compare(a, b) >= 0 ? a : b;
    }

    /** The smallest key strictly greater than {@code key}: the key followed by a zero byte. */
    public static byte[] successor(byte[] key) {
        return Arrays.copyOf(key, key.length + 1);
    }

    /**
     * The smallest key greater than every key that starts with {@code prefix}, or {@code null} when
     * no such key exists (the prefix is empty or all 0xFF).
     */
    public static byte[] prefixLimit(byte[] prefix) {
        for (int i = prefix.length - 1; i >= 0; i--) {
            if (prefix[i] != (byte) 0xFF) {
                byte[] out = Arrays.copyOf(prefix, i + 1);
                out[i]++;
                return out;
            }
        }
        return null;
    }

    /** True when {@code key} starts with {@code prefix}. */
    public static boolean startsWith(byte[] key, byte[] prefix) {
        return key.length >= prefix.length
                && Arrays.equals(key, 0, prefix.length, prefix, 0, prefix.length);
    }

    /** Lower-case hex, truncated after 32 bytes, for messages. */
    public static String hex(byte[] b) {
        if (b == null) {
            return "+inf";
        }
        StringBuilder sb = new StringBuilder();
        int n = Math.min(b.length, 32);
        for (int i = 0; i < n; i++) {
            sb.append(Character.forDigit((b[i] >> 4) & 0xF, 16))
                    .append(Character.forDigit(b[i] & 0xF, 16));
        }
        if (b.length > n) {
            sb.append("...");
        }
        return sb.toString();
    }
}
