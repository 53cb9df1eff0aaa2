package io.github.flinkstate.lru.restore;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;

/** Counts the bytes read so far, so that format errors can name the offset. Not thread-safe. */
final class CountingInputStream extends FilterInputStream {

    private long position;

    CountingInputStream(InputStream in) {
        super(in);
    }

    long position() {
        return position;
    }

    @Override
    public int read() throws IOException {
        int b = super.read();
        if (b >= 0) {
            position++;
        }
        return b;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        int n = super.read(b, off, len);
        if (n > 0) {
            position += n;
        }
        return n;
    }

    @Override
    public long skip(long n) throws IOException {
        long skipped = super.skip(n);
        position += skipped;
        return skipped;
    }

    @Override
    public boolean markSupported() {
        return false;
    }
}
