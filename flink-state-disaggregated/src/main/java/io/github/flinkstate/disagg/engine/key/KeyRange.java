package io.github.flinkstate.disagg.engine.key;

/**
 * A half-open key range {@code [lower, limit)}; {@code limit == null} means unbounded.
 *
 * <p>Thread safety: immutable (arrays are never mutated after construction).
 */
public final class KeyRange {

    public static final KeyRange ALL = new KeyRange(Bytes.EMPTY, null);

    private final byte[] lower;
    private final byte[] limit;

    public KeyRange(byte[] lower, byte[] limit) {
        this.lower = lower;
        this.limit = limit;
    }

    public static KeyRange ofPrefix(byte[] prefix) {
        return new KeyRange(prefix, Bytes.prefixLimit(prefix));
    }

    public static KeyRange of(KeyGroupSpan span) {
        return new KeyRange(span.lowerKey(), span.limitKey());
    }

    public byte[] lower() {
        return lower;
    }

    public byte[] limit() {
        return limit;
    }

    public boolean isEmpty() {
        return limit != null && Bytes.compare(lower, limit) >= 0;
    }

    public boolean contains(byte[] key) {
        return Bytes.compare(key, lower) >= 0 && Bytes.lessThanLimit(key, limit);
    }

    public boolean overlaps(KeyRange o) {
        return !intersect(o).isEmpty();
    }

    public KeyRange intersect(KeyRange o) {
        byte[] lo = Bytes.compare(lower, o.lower) >= 0 ? lower : o.lower;
        return new KeyRange(lo, Bytes.minLimit(limit, o.limit));
    }

    @Override
    public String toString() {
        return "[" + Bytes.hex(lower) + ", " + Bytes.hex(limit) + ")";
    }
}
