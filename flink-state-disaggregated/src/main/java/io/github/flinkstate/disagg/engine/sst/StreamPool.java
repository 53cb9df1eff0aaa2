package io.github.flinkstate.disagg.engine.sst;

import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

/**
 * A bounded pool of input streams over one file, so that concurrent reads of the file (point
 * lookups of several threads, short scans) run in parallel instead of queueing on one stream. A
 * reader has three: one of {@code streamsPerFile} streams for point reads, and one of a single
 * stream each for the readahead of compactions and of long scans ({@link Readahead}), which thus
 * never take a point read's stream. Flink's {@link FSDataInputStream} has only {@code seek + read},
 * no positional read, so a stream can serve one read at a time: a read borrows a stream (opening
 * one lazily when none is idle), seeks, reads and hands it back.
 *
 * <p>Bounds: at most {@code maxStreams} reads of the file run at once (a semaphore; further reads
 * wait for a stream), so at most that many streams are open. Streams stay open while idle, for the
 * next read, until {@link #close()}.
 *
 * <p>Errors: a read that fails closes and discards the stream it used (its position or connection
 * may be broken); the next read opens a fresh one, so one failure never poisons the pool. The
 * permit is always given back.
 *
 * <p>After {@link #close()} (reader evicted or closed), idle streams are closed at once and streams
 * still borrowed are closed when they come back; reads still work, each opening and closing its own
 * stream, so a reader evicted under an iterator keeps working.
 *
 * <p>Thread safety: thread-safe. A stream is used by one thread at a time.
 */
final class StreamPool {

    private final FileSystem fs;
    private final Path path;
    private final Semaphore permits;
    private final ConcurrentLinkedDeque<FSDataInputStream> idle = new ConcurrentLinkedDeque<>();
    private final AtomicInteger openStreams = new AtomicInteger();
    private volatile boolean closed;

    StreamPool(FileSystem fs, Path path, int maxStreams) {
        if (maxStreams < 1) {
            throw new IllegalArgumentException("streams per file must be >= 1: " + maxStreams);
        }
        this.fs = fs;
        this.path = path;
        this.permits = new Semaphore(maxStreams);
    }

    /**
     * Reads exactly {@code len} bytes at {@code position} into {@code buf[off..off+len)}.
     *
     * @throws EOFException if the file ends before
     * @throws java.io.FileNotFoundException if the file does not exist
     */
    void readFully(long position, byte[] buf, int off, int len) throws IOException {
        try {
            permits.acquire();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            InterruptedIOException io =
                    new InterruptedIOException("interrupted waiting for a stream of " + path);
            io.initCause(e);
            throw io;
        }
        FSDataInputStream in = null;
        try {
            in = idle.pollFirst();
            if (in == null) {
                in = fs.open(path);
                openStreams.incrementAndGet();
            }
            in.seek(position);
            int done = 0;
            while (done < len) {
                int n = in.read(buf, off + done, len - done);
                if (n < 0) {
                    throw new EOFException("end of file after " + (position + done) + " bytes");
                }
                done += n;
            }
            giveBack(in);
            in = null;
        } finally {
            if (in != null) {
                closeQuietly(in);
            }
            permits.release();
        }
    }

    private void giveBack(FSDataInputStream in) {
        if (closed) {
            closeQuietly(in);
            return;
        }
        idle.offerFirst(in);
        if (closed) {
            // close() may have drained the idle streams just before our offer
            drain();
        }
    }

    /** Closes idle streams now and borrowed ones when they come back. Idempotent. */
    void close() {
        closed = true;
        drain();
    }

    private void drain() {
        FSDataInputStream in;
        while ((in = idle.pollFirst()) != null) {
            closeQuietly(in);
        }
    }

    private void closeQuietly(FSDataInputStream in) {
        openStreams.decrementAndGet();
        try {
            in.close();
        } catch (IOException ignored) {
            // the stream is dropped either way; nothing was read from it that is kept
        }
    }

    /** Streams currently open (idle or borrowed). */
    int openStreams() {
        return openStreams.get();
    }
}
