package io.github.flinkstate.testing.fs;

import java.io.IOException;
import org.apache.flink.core.fs.FSDataOutputStream;

/**
 * The output stream of {@link InjectingFileSystem#create}: counts and paces written bytes, applies
 * {@link FsOp#WRITE} and {@link FsOp#CLOSE} hangs and latency, and fails once the stream passes an
 * injected byte limit. Not thread-safe (like every output stream).
 */
final class InjectingOutputStream extends FSDataOutputStream {

    private final FSDataOutputStream out;
    private final String path;
    private final InjectingFileSystem fs;
    private final long failAfterBytes;
    private long written;
    private boolean closed;

    InjectingOutputStream(
            FSDataOutputStream out, String path, InjectingFileSystem fs, long failAfterBytes) {
        this.out = out;
        this.path = path;
        this.fs = fs;
        this.failAfterBytes = failAfterBytes;
    }

    @Override
    public long getPos() throws IOException {
        return out.getPos();
    }

    @Override
    public void write(int b) throws IOException {
        write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        fs.before(FsOp.WRITE, path);
        if (failAfterBytes >= 0 && written + len > failAfterBytes) {
            throw new IOException(
                    "injected write failure on " + path + " after " + written + " bytes");
        }
        out.write(b, off, len);
        written += len;
        fs.transferred(FsOp.WRITE, path, len);
    }

    @Override
    public void flush() throws IOException {
        out.flush();
    }

    @Override
    public void sync() throws IOException {
        fs.before(FsOp.SYNC, path);
        out.sync();
    }

    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            fs.before(FsOp.CLOSE, path);
        } finally {
            out.close();
        }
    }
}
