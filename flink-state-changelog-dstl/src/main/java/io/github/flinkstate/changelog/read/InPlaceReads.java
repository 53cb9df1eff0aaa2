package io.github.flinkstate.changelog.read;

import io.github.flinkstate.changelog.DfsChangelogOptions;
import io.github.flinkstate.changelog.format.SegmentChanges;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.annotation.concurrent.ThreadSafe;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.util.TimeUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads DSTL segments straight from the file system when the local download cache is off ({@code
 * download.local-cache.enabled: false}), on the view's download threads rather than the restoring
 * task's, so that a hanging file system fails the restore instead of blocking it: once no byte of
 * any read in place arrived for {@code download.stall-timeout} (one clock for all reads of the
 * view, restarted whenever a read starts or a byte arrives, so a read queued behind reads that make
 * progress is never given up), the waiting reader abandons its read (interrupts its thread, closes
 * its stream on another thread, since an HDFS stream's close waits for its blocked read) and fails
 * naming the file and the option. A segment an abandoned read still decodes is closed when it
 * arrives. The caller's interrupt (Flink cancelling the task) abandons the read too, and a read
 * waiting when the view closes fails at once.
 *
 * <p>Thread safety: thread-safe; reads share only the progress clock.
 */
@ThreadSafe
final class InPlaceReads {

    private static final Logger LOG = LoggerFactory.getLogger(InPlaceReads.class);

    /** How often a waiting reader checks whether the view was closed. */
    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final ExecutorService executor;
    private final long stallTimeoutNanos;

    /** When a read in place last started or received bytes. */
    private volatile long lastProgressNanos = System.nanoTime();

    InPlaceReads(ExecutorService executor, Duration stallTimeout) {
        this.executor = executor;
        this.stallTimeoutNanos = stallTimeout.toNanos();
    }

    /** The changes of the segment at {@code offset} of {@code file}, read on a download thread. */
    SegmentChanges read(StreamStateHandle file, String name, long offset) throws IOException {
        Attempt attempt = new Attempt();
        CompletableFuture<SegmentChanges> result;
        try {
            result = CompletableFuture.supplyAsync(() -> attempt.run(file, name, offset), executor);
        } catch (RejectedExecutionException e) {
            throw new IOException(
                    "Not reading DSTL file '" + name + "': the DSTL read view is closed", e);
        }
        result.whenComplete(
                (segment, error) -> {
                    if (segment != null && attempt.isAbandoned()) {
                        segment.close(); // nobody waits for it any more
                    }
                });
        long submitted = System.nanoTime();
        while (true) {
            if (executor.isShutdown() && attempt.abandonUnlessDone(result)) {
                throw new IOException(
                        "The DSTL read view was closed while reading DSTL file '" + name + "'");
            }
            long left =
                    Math.max(submitted, lastProgressNanos) + stallTimeoutNanos - System.nanoTime();
            if (left <= 0 && attempt.abandonUnlessDone(result)) {
                LOG.warn(
                        "Abandoning the read of DSTL file {}: no byte of any read in place"
                                + " arrived for {}",
                        name,
                        stallTimeout());
                throw new IOException(
                        "No byte of any DSTL file read in place (the local cache is off) arrived"
                                + " for "
                                + stallTimeout()
                                + " while reading DSTL file '"
                                + name
                                + "': the file system may be unreachable or hanging; the read"
                                + " was abandoned (raise '"
                                + DfsChangelogOptions.DOWNLOAD_STALL_TIMEOUT.key()
                                + "' if the file system is only slow)");
            }
            try {
                // bounded also by POLL, to notice a closed view
                return result.get(Math.max(Math.min(left, POLL_NANOS), 1), TimeUnit.NANOSECONDS);
            } catch (TimeoutException stillReading) {
                // check the progress again
            } catch (InterruptedException e) {
                if (!attempt.abandonUnlessDone(result)) {
                    closeIfDecoded(result); // done meanwhile: nobody else will use it
                }
                Thread.currentThread().interrupt();
                InterruptedIOException io =
                        new InterruptedIOException("Interrupted reading DSTL file '" + name + "'");
                io.initCause(e);
                throw io;
            } catch (ExecutionException e) {
                throw unwrap(e.getCause());
            } catch (CancellationException e) {
                throw new IOException("The read of DSTL file '" + name + "' was cancelled", e);
            }
        }
    }

    private static void closeIfDecoded(CompletableFuture<SegmentChanges> result) {
        try {
            SegmentChanges segment = result.getNow(null);
            if (segment != null) {
                segment.close();
            }
        } catch (CompletionException | CancellationException failed) {
            // nothing was decoded
        }
    }

    private static IOException unwrap(Throwable cause) {
        Throwable c =
                cause instanceof CompletionException && cause.getCause() != null
                        ? cause.getCause()
                        : cause;
        if (c instanceof IOException) {
            return (IOException) c;
        }
        if (c instanceof RuntimeException) {
            throw (RuntimeException) c;
        }
        if (c instanceof Error) {
            throw (Error) c;
        }
        return new IOException(c);
    }

    private String stallTimeout() {
        return TimeUtils.formatWithHighestUnit(Duration.ofNanos(stallTimeoutNanos));
    }

    /**
     * One read: its progress, its stream and thread while it runs, and whether the reader gave it
     * up. {@link #abandoned} and the handover of the result are decided under this object's
     * monitor, so a decoded segment is either returned to the reader or closed, never both.
     */
    private final class Attempt {

        private FSDataInputStream stream;
        private Thread thread;
        private boolean abandoned;

        SegmentChanges run(StreamStateHandle file, String name, long offset) {
            FSDataInputStream in = null;
            try {
                synchronized (this) {
                    if (abandoned) {
                        throw new CompletionException(new IOException("abandoned"));
                    }
                    thread = Thread.currentThread();
                }
                lastProgressNanos = System.nanoTime(); // a read starting is progress
                in = DownloadCache.openRemote(file);
                synchronized (this) {
                    stream = in;
                    if (abandoned) {
                        throw new CompletionException(new IOException("abandoned"));
                    }
                }
                return DfsChangelogReader.readSegment(
                        in,
                        new ProgressInputStream(in, () -> lastProgressNanos = System.nanoTime()),
                        file,
                        name,
                        offset);
            } catch (IOException e) {
                throw new CompletionException(e);
            } finally {
                synchronized (this) {
                    thread = null;
                    stream = null;
                }
                Thread.interrupted(); // an abandoning reader's interrupt ends here
                if (in != null) {
                    try {
                        in.close();
                    } catch (IOException e) {
                        LOG.debug("Closing a DSTL file read in place failed", e);
                    }
                }
            }
        }

        /**
         * Gives the read up unless {@code result} is done: interrupts its thread and closes its
         * stream on another thread. Returns whether it is given up.
         */
        boolean abandonUnlessDone(CompletableFuture<SegmentChanges> result) {
            FSDataInputStream toClose;
            synchronized (this) {
                if (result.isDone()) {
                    return false;
                }
                abandoned = true;
                if (thread != null) {
                    thread.interrupt();
                }
                toClose = stream;
            }
            if (toClose != null) {
                ReadUtils.closeOnAnotherThread(toClose);
            }
            return true;
        }

        /** Whether the reader gave the read up (before it completed, see the class comment). */
        synchronized boolean isAbandoned() {
            return abandoned;
        }
    }
}
