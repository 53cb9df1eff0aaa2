package io.github.flinkstate.lru.cow;

import java.util.Arrays;

/**
 * Admission of blind writes (writes that read nothing, such as list appends) into a full cache: a
 * "doorkeeper" bit set of recently refused identities, as in TinyLFU. The first blind write of an
 * identity that is not cached is refused and remembered; a second one while it is still remembered
 * is admitted. So a full cache takes a slot only for lists appended to again soon, and a cache that
 * never hits costs one bit test per append instead of an insert, an eviction and a write-back.
 *
 * <p>The bit set is cleared after {@code window = max(maxEntries, 1024)} refusals (a tiny cache
 * still remembers the last thousand refused lists) and holds at least {@code 8 x window} bits (a
 * power of two), so at most one bit in eight is set and fewer than 12.5% of first writes are
 * admitted by a collision. Allocated on the first refusal: a cache that is never full never pays
 * for it.
 *
 * <p>Thread safety: task thread only (owned by the {@link CowLruMap}'s writer).
 */
final class BlindWriteAdmission {

    private final int window;
    private long[] bits;
    private int mask;
    private int refusals;

    BlindWriteAdmission(int maxEntries) {
        this.window = Math.max(maxEntries, 1024);
    }

    /**
     * Returns true if the identity with this hash was refused recently (admit it now); otherwise
     * remembers it and returns false.
     */
    boolean admit(int hash) {
        if (bits == null) {
            long wanted = 8L * window;
            int size = (int) Math.min(1L << 30, Long.highestOneBit(wanted - 1) << 1);
            bits = new long[size >>> 6];
            mask = size - 1;
        }
        // a second mix: the bucket index uses the low bits of the hash already
        int index = Integer.rotateLeft(hash * 0x9E3779B9, 16) & mask;
        long bit = 1L << index;
        int word = index >>> 6;
        if ((bits[word] & bit) != 0) {
            return true;
        }
        bits[word] |= bit;
        if (++refusals >= window) {
            Arrays.fill(bits, 0L);
            refusals = 0;
        }
        return false;
    }
}
