package io.github.flinkstate.disagg.engine.sst;

import java.io.IOException;
import java.net.URI;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.core.fs.BlockLocation;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

/**
 * A delegating Flink {@link FileSystem} that counts the input streams open right now (opened and
 * not yet closed), so that tests can check that readers close every stream they open. Everything
 * else passes through unchanged.
 *
 * <p>Thread safety: thread-safe.
 */
final class StreamCountingFileSystem extends FileSystem {

    private final FileSystem delegate;
    private final AtomicInteger openInputStreams = new AtomicInteger();

    StreamCountingFileSystem(FileSystem delegate) {
        this.delegate = delegate;
    }

    /** Input streams opened and not closed yet. */
    int openInputStreams() {
        return openInputStreams.get();
    }

    @Override
    public FSDataInputStream open(Path f, int bufferSize) throws IOException {
        return open(f);
    }

    @Override
    public FSDataInputStream open(Path f) throws IOException {
        FSDataInputStream in = delegate.open(f);
        openInputStreams.incrementAndGet();
        return new FSDataInputStream() {
            private boolean closed;

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
            public synchronized void close() throws IOException {
                if (!closed) {
                    closed = true;
                    openInputStreams.decrementAndGet();
                }
                in.close();
            }
        };
    }

    @Override
    public Path getWorkingDirectory() {
        return delegate.getWorkingDirectory();
    }

    @Override
    public Path getHomeDirectory() {
        return delegate.getHomeDirectory();
    }

    @Override
    public URI getUri() {
        return delegate.getUri();
    }

    @Override
    public FileStatus getFileStatus(Path f) throws IOException {
        return delegate.getFileStatus(f);
    }

    @Override
    public BlockLocation[] getFileBlockLocations(FileStatus file, long start, long len)
            throws IOException {
        return delegate.getFileBlockLocations(file, start, len);
    }

    @Override
    public FileStatus[] listStatus(Path f) throws IOException {
        return delegate.listStatus(f);
    }

    @Override
    public boolean delete(Path f, boolean recursive) throws IOException {
        return delegate.delete(f, recursive);
    }

    @Override
    public boolean mkdirs(Path f) throws IOException {
        return delegate.mkdirs(f);
    }

    @Override
    public FSDataOutputStream create(Path f, WriteMode overwriteMode) throws IOException {
        return delegate.create(f, overwriteMode);
    }

    @Override
    public boolean rename(Path src, Path dst) throws IOException {
        return delegate.rename(src, dst);
    }

    @Override
    public boolean isDistributedFS() {
        return delegate.isDistributedFS();
    }
}
