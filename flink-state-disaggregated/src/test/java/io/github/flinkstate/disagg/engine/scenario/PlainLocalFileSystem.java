package io.github.flinkstate.disagg.engine.scenario;

import java.io.IOException;
import java.net.URI;
import org.apache.flink.core.fs.BlockLocation;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.local.LocalFileSystem;

/**
 * Flink's local file system behind a class the engine does not recognise as local, so that its
 * point reads use Flink's local stream ({@code seek} + {@code read}) instead of a file channel's
 * positional read. Every call goes straight to {@link LocalFileSystem}, with nothing counted or
 * checked, for a fair comparison of the two ways to read ({@link PointReadScenario}).
 *
 * <p>Thread safety: as {@link LocalFileSystem}.
 */
final class PlainLocalFileSystem extends FileSystem {

    private final FileSystem local = LocalFileSystem.getSharedInstance();

    @Override
    public Path getWorkingDirectory() {
        return local.getWorkingDirectory();
    }

    @Override
    public Path getHomeDirectory() {
        return local.getHomeDirectory();
    }

    @Override
    public URI getUri() {
        return local.getUri();
    }

    @Override
    public FileStatus getFileStatus(Path f) throws IOException {
        return local.getFileStatus(f);
    }

    @Override
    public BlockLocation[] getFileBlockLocations(FileStatus file, long start, long len)
            throws IOException {
        return local.getFileBlockLocations(file, start, len);
    }

    @Override
    public FSDataInputStream open(Path f, int bufferSize) throws IOException {
        return local.open(f, bufferSize);
    }

    @Override
    public FSDataInputStream open(Path f) throws IOException {
        return local.open(f);
    }

    @Override
    public FileStatus[] listStatus(Path f) throws IOException {
        return local.listStatus(f);
    }

    @Override
    public boolean delete(Path f, boolean recursive) throws IOException {
        return local.delete(f, recursive);
    }

    @Override
    public boolean mkdirs(Path f) throws IOException {
        return local.mkdirs(f);
    }

    @Override
    public FSDataOutputStream create(Path f, WriteMode overwriteMode) throws IOException {
        return local.create(f, overwriteMode);
    }

    @Override
    public boolean rename(Path src, Path dst) throws IOException {
        return local.rename(src, dst);
    }

    @Override
    public boolean isDistributedFS() {
        return false;
    }
}
