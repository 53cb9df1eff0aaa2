package io.github.flinkstate.changelog.read;

import java.io.Closeable;
import java.io.IOException;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Small helpers shared by the read path. Thread safety: stateless. */
final class ReadUtils {

    private static final Logger LOG = LoggerFactory.getLogger(ReadUtils.class);

    private ReadUtils() {}

    /**
     * Closes an abandoned read's {@code stream} on a new daemon thread named {@code threadName},
     * since the close of a stream blocked in a read may wait for that read (HDFS's does); a failed
     * close is logged at debug level (the stream is dropped either way).
     */
    static void closeOnAnotherThread(Closeable stream, String threadName) {
        Thread closer =
                new Thread(
                        () -> {
                            try {
                                stream.close();
                            } catch (IOException | RuntimeException e) {
                                LOG.debug("Closing an abandoned DSTL read failed", e);
                            }
                        },
                        threadName);
        closer.setDaemon(true);
        closer.setContextClassLoader(ReadUtils.class.getClassLoader()); // not the job's
        closer.start();
    }

    /** A human-readable name of the file behind a handle, for error messages. */
    static String nameOf(StreamStateHandle handle) {
        if (handle instanceof FileStateHandle) {
            return ((FileStateHandle) handle).getFilePath().toString();
        }
        return handle.getStreamStateHandleID().getKeyString();
    }
}
