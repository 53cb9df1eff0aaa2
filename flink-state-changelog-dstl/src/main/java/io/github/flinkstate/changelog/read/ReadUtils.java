package io.github.flinkstate.changelog.read;

import java.io.Closeable;
import java.io.IOException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Small helpers shared by the read path. Thread safety: stateless. */
final class ReadUtils {

    private static final Logger LOG = LoggerFactory.getLogger(ReadUtils.class);

    private ReadUtils() {}

    /**
     * The most threads closing abandoned streams at once. A close may wait as long as the read it
     * abandons (for ever on a hung file system), so closes beyond this queue behind them instead of
     * each taking a new thread for the length of the hang.
     */
    static final int MAX_CLOSING_THREADS = 4;

    /** Closes abandoned streams; its threads end after 10 s idle, so none outlives the need. */
    private static final ThreadPoolExecutor CLOSER = closer();

    private static ThreadPoolExecutor closer() {
        AtomicInteger count = new AtomicInteger();
        ThreadPoolExecutor pool =
                new ThreadPoolExecutor(
                        MAX_CLOSING_THREADS,
                        MAX_CLOSING_THREADS,
                        10,
                        TimeUnit.SECONDS,
                        new LinkedBlockingQueue<>(),
                        r -> {
                            Thread t =
                                    new Thread(
                                            r,
                                            "dstl-abandoned-stream-close-"
                                                    + count.incrementAndGet());
                            t.setDaemon(true);
                            t.setContextClassLoader(
                                    ReadUtils.class.getClassLoader()); // not the job's
                            return t;
                        });
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    /**
     * Closes an abandoned read's {@code stream} off the calling thread, since the close of a stream
     * blocked in a read may wait for that read (HDFS's does); at most {@link #MAX_CLOSING_THREADS}
     * closes run at once. A failed close is logged at debug level (the stream is dropped either
     * way).
     */
    static void closeOnAnotherThread(Closeable stream) {
        CLOSER.execute(
                () -> {
                    try {
                        stream.close();
                    } catch (IOException | RuntimeException e) {
                        LOG.debug("Closing an abandoned DSTL read failed", e);
                    }
                });
    }

    /** A human-readable name of the file behind a handle, for error messages. */
    static String nameOf(StreamStateHandle handle) {
        if (handle instanceof FileStateHandle) {
            return ((FileStateHandle) handle).getFilePath().toString();
        }
        return handle.getStreamStateHandleID().getKeyString();
    }
}
