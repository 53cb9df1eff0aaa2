package io.github.flinkstate.changelog.testutils;

import java.net.URI;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystemFactory;

/** Registers {@link FaultInjectingFileSystem} for the {@code faulty://} scheme (test services). */
public final class FaultInjectingFileSystemFactory implements FileSystemFactory {

    @Override
    public String getScheme() {
        return FaultInjectingFileSystem.SCHEME;
    }

    @Override
    public FileSystem create(URI fsUri) {
        return FaultInjectingFileSystem.INSTANCE;
    }
}
