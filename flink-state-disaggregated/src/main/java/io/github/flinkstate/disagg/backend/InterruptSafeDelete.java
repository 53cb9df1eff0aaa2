package io.github.flinkstate.disagg.backend;

import java.io.IOException;
import org.apache.flink.core.fs.Path;

/**
 * Deletes for clean-ups that may run on an interrupted thread: a restore or a task that Flink
 * cancels fails on its interrupted thread and cleans up there, where an interruptible file-system
 * call (HDFS, S3) fails at once and the file would stay. The interrupt is set aside for the delete
 * and set again after it, so the cancellation stays visible.
 *
 * <p>Thread safety: stateless.
 */
public final class InterruptSafeDelete {

    private InterruptSafeDelete() {}

    /** Deletes the file at {@code path}; true if it was deleted, false if it was not there. */
    public static boolean delete(Path path) throws IOException {
        boolean interrupted = Thread.interrupted();
        try {
            return path.getFileSystem().delete(path, false);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
