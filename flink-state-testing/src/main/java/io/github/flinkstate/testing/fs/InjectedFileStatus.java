package io.github.flinkstate.testing.fs;

import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.Path;

/**
 * A delegate's {@link FileStatus} seen through {@link InjectingFileSystem}: the path in the
 * injecting file system's scheme and the length cut to an injected truncation. Immutable.
 */
final class InjectedFileStatus implements FileStatus {

    final FileStatus raw;
    private final Path path;
    private final long truncatedTo;

    InjectedFileStatus(FileStatus raw, Path path, long truncatedTo) {
        this.raw = raw;
        this.path = path;
        this.truncatedTo = truncatedTo;
    }

    @Override
    public long getLen() {
        return truncatedTo < 0 ? raw.getLen() : Math.min(truncatedTo, raw.getLen());
    }

    @Override
    public long getBlockSize() {
        return raw.getBlockSize();
    }

    @Override
    public short getReplication() {
        return raw.getReplication();
    }

    @Override
    public long getModificationTime() {
        return raw.getModificationTime();
    }

    @Override
    public long getAccessTime() {
        return raw.getAccessTime();
    }

    @Override
    public boolean isDir() {
        return raw.isDir();
    }

    @Override
    public Path getPath() {
        return path;
    }
}
