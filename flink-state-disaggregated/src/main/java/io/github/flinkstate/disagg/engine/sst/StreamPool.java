package io.github.flinkstate.disagg.engine.sst;

import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.core.fs.ByteBufferReadable;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

/**
 * A bounded pool of input streams over one file, so that concurrent reads of the file (point
 * lookups of several threads, short scans) run in parallel instead of queueing on one stream. A
 * reader has three: one of {@code streamsPerFile} streams for point reads, and one of a single
 * stream each for the readahead of compactions and of long scans ({@link Readahead}), which thus
 * never take a point read's stream. A read borrows a stream (opening one lazily when none is idle),
 * reads and hands it back, so a stream serves one read at a time.
 *
 * <p>How a borrowed stream reads. A pool made for positional reads, on a distributed file system
 * whose streams offer one ({@link ByteBufferReadable#read(long, ByteBuffer)}; Flink's Hadoop stream
 * serves it with HDFS's "pread"), reads with it: the DataNode is asked for exactly the bytes
 * wanted, where a {@code seek} to another place makes the next {@code read} open a block reader
 * that streams towards the end of the block. Otherwise the stream seeks and reads: the sequential
 * pools (large consecutive windows, what a stream's sequential read serves best) and local file
 * systems, whose positional read ({@code FileChannel}) would copy through a temporary direct buffer
 * as large as the read. Streams are never shared between threads: some positional reads are a
 * locked seek and read (Hadoop's default, S3A), and an interrupt during a {@code FileChannel} read
 * closes the channel for everyone using it.
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
    private final boolean positional;
    private final AtomicLong positionalReads = new AtomicLong();
    private final ConcurrentLinkedDeque<FSDataInputStream> idle = new ConcurrentLinkedDeque<>();
    private final AtomicInteger openStreams = new AtomicInteger();
    private volatile boolean closed;

    /**
     * @param positional whether reads should use the streams' positional read where the file system
     *     is distributed and its streams offer one
     */
    StreamPool(FileSystem fs, Path path, int maxStreams, boolean positional) {
        if (maxStreams < 1) {
            throw new IllegalArgumentException("streams per file must be >= 1: " + maxStreams);
        }
        this.fs = fs;
        this.path = path;
        this.permits = new Semaphore(maxStreams);
        this.positional = positional && fs.isDistributedFS();
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
            if (positional && in instanceof ByteBufferReadable) {
                readPositional((ByteBufferReadable) in, position, buf, off, len);
                positionalReads.incrementAndGet();
            } else {
                in.seek(position);
                int done = 0;
                while (done < len) {
                    int n = in.read(buf, off + done, len - done);
                    if (n < 0) {
                        throw new EOFException("end of file after " + (position + done) + " bytes");
                    }
                    done += n;
                }
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

    /**
     * Reads exactly {@code len} bytes at {@code position} with positional reads. Each call gets a
     * buffer starting at its own array offset: Flink's Hadoop stream fills a heap buffer from its
     * array offset, whatever the buffer's position, and does not move the position.
     */
    private static void readPositional(
            ByteBufferReadable in, long position, byte[] buf, int off, int len) throws IOException {
        int done = 0;
        while (done < len) {
            int n = in.read(position + done, ByteBuffer.wrap(buf, off + done, len - done).slice());
            if (n < 0) {
                throw new EOFException("end of file after " + (position + done) + " bytes");
            }
            if (n == 0) {
                throw new IOException(
                        "positional read at " + (position + done) + " returned no bytes");
            }
            done += n;
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

    /** Reads served by a positional read so far (for tests). */
    long positionalReads() {
        return positionalReads.get();
    }

    /** Streams currently open (idle or borrowed). */
    int openStreams() {
        return openStreams.get();
    }
}
