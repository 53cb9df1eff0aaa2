package io.github.flinkstate.disagg.engine.sst;

import java.util.Arrays;

/**
 * A growable big-endian byte buffer with LEB128 varints, used to build blocks, footers and
 * manifests.
 *
 * <p>Thread safety: not thread-safe; confined to the building thread.
 */
public final class ByteWriter {

    private byte[] buf;
    private int len;

    public ByteWriter(int initialCapacity) {
        buf = new byte[Math.max(16, initialCapacity)];
    }

    public ByteWriter u8(int v) {
        ensure(1);
        buf[len++] = (byte) v;
        return this;
    }

    public ByteWriter u32(int v) {
        ensure(4);
        for (int s = 24; s >= 0; s -= 8) {
            buf[len++] = (byte) (v >>> s);
        }
        return this;
    }

    public ByteWriter u64(long v) {
        ensure(8);
        for (int s = 56; s >= 0; s -= 8) {
            buf[len++] = (byte) (v >>> s);
        }
        return this;
    }

    /** Unsigned LEB128 varint of a non-negative long. */
    public ByteWriter varint(long v) {
        if (v < 0) {
            throw new IllegalArgumentException("negative varint " + v);
        }
        ensure(10);
        while ((v & ~0x7FL) != 0) {
            buf[len++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        buf[len++] = (byte) v;
        return this;
    }

    /** Varint length followed by the bytes. */
    public ByteWriter bytes(byte[] b) {
        varint(b.length);
        return raw(b, 0, b.length);
    }

    public ByteWriter raw(byte[] b, int off, int n) {
        ensure(n);
        System.arraycopy(b, off, buf, len, n);
        len += n;
        return this;
    }

    public int length() {
        return len;
    }

    public byte[] array() {
        return buf;
    }

    public byte[] toByteArray() {
        return Arrays.copyOf(buf, len);
    }

    public void reset() {
        len = 0;
    }

    private void ensure(int n) {
        if (len + n > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + n));
        }
    }
}
