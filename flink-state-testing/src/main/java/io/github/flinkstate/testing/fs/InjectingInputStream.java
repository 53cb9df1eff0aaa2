package io.github.flinkstate.testing.fs;

import java.io.IOException;
import java.util.Set;
import org.apache.flink.core.fs.FSDataInputStream;

/**
 * The input stream of {@link InjectingFileSystem#open}: ends early at an injected truncation, flips
 * injected bytes, counts and paces read bytes, applies {@link FsOp#READ} hangs and latency. Not
 * thread-safe (like every input stream).
 */
final class InjectingInputStream extends FSDataInputStream {

    private final FSDataInputStream in;
    private final String path;
    private final InjectingFileSystem fs;
    private boolean closed;

    InjectingInputStream(FSDataInputStream in, String path, InjectingFileSystem fs) {
        this.in = in;
        this.path = path;
        this.fs = fs;
    }

    @Override
    public void seek(long desired) throws IOException {
        in.seek(desired);
    }

    @Override
    public long getPos() throws IOException {
        return in.getPos();
    }

    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        int n = read(one, 0, 1);
        return n <= 0 ? -1 : one[0] & 0xFF;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        if (len == 0) {
            return 0;
        }
        long pos = in.getPos();
        long t = fs.truncation(path);
        if (t >= 0) {
            if (pos >= t) {
                return -1;
            }
            len = (int) Math.min(len, t - pos);
        }
        fs.before(FsOp.READ, path);
        int n = in.read(b, off, len);
        if (n > 0) {
            Set<Long> flips = fs.flips(path);
            if (flips != null) {
                for (long at : flips) {
                    if (at >= pos && at < pos + n) {
                        b[off + (int) (at - pos)] ^= 0x5A;
                    }
                }
            }
            fs.transferred(FsOp.READ, path, n);
        }
        return n;
    }

    @Override
    public long skip(long n) throws IOException {
        return in.skip(n);
    }

    @Override
    public int available() throws IOException {
        return in.available();
    }

    @Override
    public void close() throws IOException {
        if (!closed) {
            closed = true;
            fs.inputStreamClosed();
        }
        in.close();
    }
}
