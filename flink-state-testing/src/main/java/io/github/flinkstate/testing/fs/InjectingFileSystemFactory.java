package io.github.flinkstate.testing.fs;

import java.net.URI;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystemFactory;

/**
 * Registers {@link InjectingFileSystem#shared()} for the {@code inject://} scheme; found by Flink
 * through {@code META-INF/services/org.apache.flink.core.fs.FileSystemFactory}.
 */
public final class InjectingFileSystemFactory implements FileSystemFactory {

    @Override
    public String getScheme() {
        return InjectingFileSystem.SCHEME;
    }

    @Override
    public FileSystem create(URI fsUri) {
        return InjectingFileSystem.shared();
    }
}
