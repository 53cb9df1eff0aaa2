package io.github.flinkstate.disagg.engine.sst;

import java.io.IOException;
import java.util.Arrays;

/**
 * A bounds-checked big-endian reader over a byte range, the counterpart of {@link ByteWriter}.
 * Malformed input raises {@link IOException} (never an unchecked exception), so callers can attach
 * the file path and offset.
 *
 * <p>Thread safety: not thread-safe; each reader has one cursor.
 */
public final class ByteReader {

    private final byte[] buf;
    private final int end;
    private int pos;

    public ByteReader(byte[] buf, int off, int len) {
        this.buf = buf;
        this.pos = off;
        this.end = off + len;
    }

    public boolean hasRemaining() {
        return pos < end;
    }

    public int position() {
        return pos;
    }

    public void position(int p) {
        pos = p;
    }

    public int u8() throws IOException {
        need(1);
        return buf[pos++] & 0xFF;
    }

    public int u32() throws IOException {
        need(4);
        int v = 0;
        for (int i = 0; i < 4; i++) {
            v = (v << 8) | (buf[pos++] & 0xFF);
        }
        return v;
    }

    public long u64() throws IOException {
        need(8);
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (buf[pos++] & 0xFF);
        }
        return v;
    }

    public long varint() throws IOException {
        long v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            need(1);
            byte b = buf[pos++];
            v |= (long) (b & 0x7F) << shift;
            if ((b & 0x80) == 0) {
                return v;
            }
        }
        throw new IOException("varint too long at " + pos);
    }

    public int varint32() throws IOException {
        long v = varint();
        if (v > Integer.MAX_VALUE) {
            throw new IOException("length " + v + " too large at " + pos);
        }
        return (int) v;
    }

    public byte[] bytes() throws IOException {
        int n = varint32();
        need(n);
        byte[] out = Arrays.copyOfRange(buf, pos, pos + n);
        pos += n;
        return out;
    }

    /** Copies the next {@code n} bytes into {@code dst} at {@code off}. */
    public void readInto(byte[] dst, int off, int n) throws IOException {
        need(n);
        System.arraycopy(buf, pos, dst, off, n);
        pos += n;
    }

    /** Skips a varint-length-prefixed byte string. */
    public void skipBytes() throws IOException {
        int n = varint32();
        need(n);
        pos += n;
    }

    private void need(int n) throws IOException {
        if (n < 0 || pos + n > end) {
            throw new IOException("unexpected end of data at " + pos + " (need " + n + ")");
        }
    }
}
