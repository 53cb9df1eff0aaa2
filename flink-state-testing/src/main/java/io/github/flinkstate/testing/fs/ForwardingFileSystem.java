package io.github.flinkstate.testing.fs;

import java.io.IOException;
import java.net.URI;
import org.apache.flink.core.fs.BlockLocation;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

/**
 * A file system that passes every call straight to its delegate, with nothing counted, checked or
 * wrapped (unlike {@link InjectingFileSystem}, whose streams ask for their position on every read).
 * Its use: a delegate behind a class that code recognising file systems by class does not know, for
 * a fair baseline (the disaggregated engine reads Flink's local file system with a file channel,
 * and behind this class with Flink's stream).
 *
 * <p>Thread safety: as the delegate.
 */
public final class ForwardingFileSystem extends FileSystem {

    private final FileSystem delegate;

    public ForwardingFileSystem(FileSystem delegate) {
        this.delegate = delegate;
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
    public FSDataInputStream open(Path f, int bufferSize) throws IOException {
        return delegate.open(f, bufferSize);
    }

    @Override
    public FSDataInputStream open(Path f) throws IOException {
        return delegate.open(f);
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
