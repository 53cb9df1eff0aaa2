package io.github.flinkstate.disagg.engine.key;

/**
 * An inclusive range of key groups {@code [start, end]}, and the key-group prefix encoding.
 *
 * <p>Key encoding: every engine key begins with its key group as 2 bytes big-endian unsigned
 * (0..65535; Flink uses at most 32768). Hence all keys of one key group are contiguous and
 * key-group ranges map to key ranges: {@code [kg(start), kg(end + 1))}.
 *
 * <p>Thread safety: immutable.
 *
 * <p>Invariants:
 *
 * <ol>
 *   <li>{@code 0 <= start}, {@code end <= 65535}; {@code start > end} only for {@link #EMPTY}.
 * </ol>
 */
public final class KeyGroupSpan {

    public static final int MAX_KEY_GROUP = 0xFFFF;
    public static final int PREFIX_BYTES = 2;
    public static final KeyGroupSpan EMPTY = new KeyGroupSpan(1, 0);

    private final int start;
    private final int end;

    private KeyGroupSpan(int start, int end) {
        this.start = start;
        this.end = end;
    }

    /** Inclusive span; requires {@code 0 <= start <= end <= 65535}. */
    public static KeyGroupSpan of(int start, int end) {
        if (start < 0 || end > MAX_KEY_GROUP || start > end) {
            throw new IllegalArgumentException("Bad key-group span [" + start + ", " + end + "]");
        }
        return new KeyGroupSpan(start, end);
    }

    public int start() {
        return start;
    }

    public int end() {
        return end;
    }

    public boolean isEmpty() {
        return start > end;
    }

    public boolean contains(int keyGroup) {
        return keyGroup >= start && keyGroup <= end;
    }

    public KeyGroupSpan intersect(KeyGroupSpan o) {
        int s = Math.max(start, o.start);
        int e = Math.min(end, o.end);
        return s > e ? EMPTY : new KeyGroupSpan(s, e);
    }

    public boolean overlaps(KeyGroupSpan o) {
        return !intersect(o).isEmpty();
    }

    /** Smallest possible key of this span. */
    public byte[] lowerKey() {
        return prefixOf(start);
    }

    /** Exclusive upper key bound of this span, {@code null} if the span ends at 65535. */
    public byte[] limitKey() {
        return end == MAX_KEY_GROUP ? null : prefixOf(end + 1);
    }

    /** The 2-byte big-endian key prefix of a key group. */
    public static byte[] prefixOf(int keyGroup) {
        return new byte[] {(byte) (keyGroup >>> 8), (byte) keyGroup};
    }

    /** The key group a key belongs to; requires {@code key.length >= 2}. */
    public static int keyGroupOf(byte[] key) {
        return ((key[0] & 0xFF) << 8) | (key[1] & 0xFF);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof KeyGroupSpan
                && ((KeyGroupSpan) o).start == start
                && ((KeyGroupSpan) o).end == end;
    }

    @Override
    public int hashCode() {
        return start * 31 + end;
    }

    @Override
    public String toString() {
        return isEmpty() ? "KeyGroupSpan[]" : "KeyGroupSpan[" + start + ", " + end + "]";
    }
}
