package io.github.flinkstate.testing.fs;

import java.io.IOException;
import org.apache.flink.core.fs.FSDataInputStream;

/**
 * An input stream of {@link InjectingFileSystem} with its positional read hidden: only seek and
 * read, as the streams of a file system that does not implement {@link
 * org.apache.flink.core.fs.ByteBufferReadable} (see {@link
 * InjectingFileSystem#positionalReads(boolean)}).
 *
 * <p>Thread safety: none, like every input stream.
 */
final class SequentialInputStream extends FSDataInputStream {

    private final InjectingInputStream in;

    SequentialInputStream(InjectingInputStream in) {
        this.in = in;
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
        return in.read();
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        return in.read(b, off, len);
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
        in.close();
    }
}
