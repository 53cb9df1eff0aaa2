package io.github.flinkstate.testing.fs;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Set;
import org.apache.flink.core.fs.ByteBufferReadable;
import org.apache.flink.core.fs.FSDataInputStream;

/**
 * The input stream of {@link InjectingFileSystem#open}: ends early at an injected truncation, flips
 * injected bytes, counts and paces read bytes, applies {@link FsOp#READ} hangs and latency.
 *
 * <p>Latency is paid per round trip, as on a DFS or object store: a read that starts where the
 * stream's previous read ended continues the transfer and pays only bandwidth; the first read, and
 * a read after a {@code seek} to another position, pay the {@link FsOp#READ} latency once. (Hangs,
 * counters and injected faults apply to every call.) Like Hadoop's HDFS stream it is also {@link
 * ByteBufferReadable}: {@link #read(ByteBuffer)} fills the whole buffer (up to the end of the file)
 * in one call, and the positional {@link #read(long, ByteBuffer)} is always one round trip. Without
 * this, callers that read a plain stream byte by byte (ForSt does) would pay one latency per byte.
 *
 * <p>Thread safety: the stream methods are not thread-safe (like every input stream); the
 * positional read is thread-safe and leaves the stream's position unchanged: concurrent positional
 * reads wait for their hangs and latency at the same time, and only their transfers take turns
 * (under the stream's lock).
 */
final class InjectingInputStream extends FSDataInputStream implements ByteBufferReadable {

    private final FSDataInputStream in;
    private final String path;
    private final InjectingFileSystem fs;
    private boolean closed;

    /** Where the previous read ended: a read starting here is no new round trip (-1: none yet). */
    private long continuesAt = -1;

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
        fs.before(FsOp.READ, path, in.getPos() != continuesAt);
        return readOnce(b, off, len);
    }

    @Override
    public int read(ByteBuffer buffer) throws IOException {
        if (!buffer.hasRemaining()) {
            return 0;
        }
        fs.before(FsOp.READ, path, in.getPos() != continuesAt);
        return fill(buffer);
    }

    @Override
    public int read(long position, ByteBuffer buffer) throws IOException {
        if (!buffer.hasRemaining()) {
            return 0;
        }
        // hangs and latency outside the lock: positional reads of one stream overlap, as on HDFS
        fs.before(FsOp.READ, path);
        synchronized (this) {
            return readAt(position, buffer);
        }
    }

    /** The transfer of a positional read, under the stream's lock. */
    private int readAt(long position, ByteBuffer buffer) throws IOException {
        long saved = in.getPos();
        long savedContinuesAt = continuesAt;
        in.seek(position);
        try {
            return fill(buffer);
        } finally {
            in.seek(saved);
            continuesAt = savedContinuesAt; // a positional read leaves the stream's transfer alone
        }
    }

    /** Reads into {@code buffer} until it is full or the file ends; no latency charged here. */
    private int fill(ByteBuffer buffer) throws IOException {
        byte[] chunk = new byte[Math.min(buffer.remaining(), 1 << 16)];
        int total = 0;
        while (buffer.hasRemaining()) {
            int n = readOnce(chunk, 0, Math.min(chunk.length, buffer.remaining()));
            if (n < 0) {
                break;
            }
            buffer.put(chunk, 0, n);
            total += n;
        }
        return total == 0 ? -1 : total;
    }

    /** One read of the underlying stream with truncation, flips and pacing; no latency. */
    private int readOnce(byte[] b, int off, int len) throws IOException {
        long pos = in.getPos();
        long t = fs.truncation(path);
        if (t >= 0) {
            if (pos >= t) {
                return -1;
            }
            len = (int) Math.min(len, t - pos);
        }
        int n = in.read(b, off, len);
        continuesAt = n > 0 ? pos + n : continuesAt;
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

    /** Skips within the file as truncated (an injected truncation ends it early). */
    @Override
    public long skip(long n) throws IOException {
        return in.skip(Math.min(n, bytesBeforeCut(Long.MAX_VALUE)));
    }

    /** At most the bytes before an injected truncation. */
    @Override
    public int available() throws IOException {
        return (int) bytesBeforeCut(in.available());
    }

    /** {@code n}, or fewer: the bytes from the position to an injected truncation. */
    private long bytesBeforeCut(long n) throws IOException {
        long t = fs.truncation(path);
        return t < 0 ? n : Math.max(0, Math.min(n, t - in.getPos()));
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
