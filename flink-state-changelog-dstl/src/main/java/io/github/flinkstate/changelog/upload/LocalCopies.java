package io.github.flinkstate.changelog.upload;

import javax.annotation.Nullable;
import javax.annotation.concurrent.ThreadSafe;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes local-recovery copies of uploaded DSTL files into the TaskManager's task-owned local state
 * directory of the job (the directory Flink's {@code ChangelogTaskLocalStateStore} cleans up when
 * the job leaves the TaskManager). A copy has the same name and bytes as its remote file, so the
 * same offsets address the same segments.
 *
 * <p>Thread safety: thread-safe (stateless apart from the directory).
 *
 * <p>Best effort: a failed local write is logged and yields no local copy; the checkpoint then has
 * no task-local snapshot and recovery reads the remote file.
 */
@ThreadSafe
public final class LocalCopies {

    private static final Logger LOG = LoggerFactory.getLogger(LocalCopies.class);

    private final Path directory;

    public LocalCopies(Path directory) {
        this.directory = directory;
    }

    /** Writes the image as {@code <directory>/<fileName>}; returns null if that failed. */
    @Nullable
    FileStateHandle write(String fileName, byte[] image) {
        Path path = new Path(directory, fileName);
        try {
            FileSystem fs = path.getFileSystem();
            fs.mkdirs(directory);
            try (FSDataOutputStream out = fs.create(path, FileSystem.WriteMode.NO_OVERWRITE)) {
                out.write(image);
            }
            return new FileStateHandle(path, image.length);
        } catch (Exception e) {
            LOG.warn("Could not write the local-recovery copy {} of a DSTL file", path, e);
            try {
                path.getFileSystem().delete(path, false);
            } catch (Exception ignored) {
                // best effort
            }
            return null;
        }
    }

    public Path getDirectory() {
        return directory;
    }
}
