package io.github.flinkstate.disagg.engine.sst;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.apache.flink.core.fs.ByteBufferReadable;
import org.apache.flink.core.fs.FSDataInputStream;

/**
 * A {@link ReadSource} over a Flink input stream. With {@code positional} set and a stream that
 * offers one ({@link ByteBufferReadable#read(long, ByteBuffer)}; Flink's Hadoop stream serves it
 * with HDFS's "pread"), a read is one positional request: the DataNode is asked for exactly the
 * bytes wanted, where a {@code seek} elsewhere makes the next {@code read} open a block reader that
 * streams towards the end of the block. Otherwise a read seeks and reads.
 *
 * <p>Thread safety: none (one thread at a time, see {@link StreamPool}).
 */
final class StreamReadSource implements ReadSource {

    private final FSDataInputStream in;
    private final boolean positional;

    StreamReadSource(FSDataInputStream in, boolean positional) {
        this.in = in;
        this.positional = positional && in instanceof ByteBufferReadable;
    }

    @Override
    public void readFully(long position, byte[] buf, int off, int len) throws IOException {
        if (positional) {
            readPositional((ByteBufferReadable) in, position, buf, off, len);
            return;
        }
        in.seek(position);
        int done = 0;
        while (done < len) {
            int n = in.read(buf, off + done, len - done);
            if (n < 0) {
                throw new EOFException("end of file after " + (position + done) + " bytes");
            }
            done += n;
        }
    }

    /**
     * Each call gets a buffer starting at its own array offset: Flink's Hadoop stream fills a heap
     * buffer from its array offset, whatever the buffer's position, and does not move the position.
     */
    private static void readPositional(
            ByteBufferReadable in, long position, byte[] buf, int off, int len) throws IOException {
        int done = 0;
        while (done < len) {
            int n = in.read(position + done, ByteBuffer.wrap(buf, off + done, len - done).slice());
            if (n < 0) {
                throw new EOFException("end of file after " + (position + done) + " bytes");
            }
            if (n == 0) {
                throw new IOException(
                        "positional read at " + (position + done) + " returned no bytes");
            }
            done += n;
        }
    }

    @Override
    public boolean positional() {
        return positional;
    }

    @Override
    public void close() throws IOException {
        in.close();
    }
}
