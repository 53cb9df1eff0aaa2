package io.github.flinkstate.testing.checkpoint;

import java.io.IOException;
import org.apache.flink.runtime.state.CheckpointStateOutputStream;
import org.apache.flink.runtime.state.StreamStateHandle;

/**
 * A checkpoint output stream that forwards every call to another one; tests override the calls they
 * want to block, slow down or fail (see {@link ForwardingStreamFactory}).
 *
 * <p>Thread safety: as the wrapped stream.
 */
public class ForwardingOutputStream extends CheckpointStateOutputStream {

    protected final CheckpointStateOutputStream out;

    public ForwardingOutputStream(CheckpointStateOutputStream out) {
        this.out = out;
    }

    @Override
    public void write(int b) throws IOException {
        out.write(b);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        out.write(b, off, len);
    }

    @Override
    public long getPos() throws IOException {
        return out.getPos();
    }

    @Override
    public void flush() throws IOException {
        out.flush();
    }

    @Override
    public void sync() throws IOException {
        out.sync();
    }

    @Override
    public StreamStateHandle closeAndGetHandle() throws IOException {
        return out.closeAndGetHandle();
    }

    @Override
    public void close() throws IOException {
        out.close();
    }
}
