package io.github.flinkstate.disagg.engine.sst;

import java.io.EOFException;
import java.io.File;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.core.fs.ByteBufferReadable;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.local.LocalFileSystem;
import org.apache.flink.util.WrappingProxy;
import org.apache.flink.util.WrappingProxyUtil;

/**
 * A bounded pool of open sources of reads over one file ({@link ReadSource}), so that concurrent
 * reads of the file (point lookups of several threads, short scans) run in parallel instead of
 * queueing on one stream. A reader has three: one of {@code streamsPerFile} sources for point
 * reads, and one of a single source each for the readahead of compactions and of long scans ({@link
 * Readahead}), which thus never take a point read's source. A read borrows a source (opening one
 * lazily when none is idle), reads and hands it back, so a source serves one read at a time.
 *
 * <p>Which source. A pool made for positional reads reads with one request per read where the file
 * system allows it: on a distributed file system whose streams offer a positional read ({@link
 * ByteBufferReadable#read(long, java.nio.ByteBuffer)}, HDFS's "pread") through the stream ({@link
 * StreamReadSource}); on the local file system (Flink's {@link LocalFileSystem}, also behind
 * Flink's wrappers such as the task's safety net) with a file channel of its own ({@link
 * LocalChannelReadSource}), one system call per read instead of three. Otherwise a Flink stream
 * seeks and reads: the sequential pools (large consecutive windows, what a stream's sequential read
 * serves best), file systems without a positional read, and any other file system class, so a
 * wrapping file system (the test kit's fault injection, say) sees every read. Sources are never
 * shared between threads: some positional reads are a locked seek and read (Hadoop's default, S3A),
 * and an interrupt during a {@code FileChannel} read closes the channel.
 *
 * <p>Bounds: at most {@code maxStreams} reads of the file run at once (a semaphore; further reads
 * wait for a source), so at most that many sources are open. Sources stay open while idle, for the
 * next read, until {@link #close()}.
 *
 * <p>Errors: a read that fails closes and discards the source it used (its position or connection
 * may be broken); the next read opens a fresh one, so one failure never poisons the pool. The
 * permit is always given back.
 *
 * <p>After {@link #close()} (reader evicted or closed), idle sources are closed at once and sources
 * still borrowed are closed when they come back; reads still work, each opening and closing its own
 * source, so a reader evicted under an iterator keeps working.
 *
 * <p>Thread safety: thread-safe. A source is used by one thread at a time.
 */
final class StreamPool {

    private final FileSystem fs;
    private final Path path;
    private final Semaphore permits;
    private final boolean positional;

    /** The file on the local file system, for positional reads with a channel; else null. */
    private final File localFile;

    private final AtomicLong positionalReads = new AtomicLong();
    private final ConcurrentLinkedDeque<ReadSource> idle = new ConcurrentLinkedDeque<>();
    private final AtomicInteger openStreams = new AtomicInteger();
    private volatile boolean closed;

    /**
     * @param positional whether reads should be positional where the file system offers it (point
     *     reads), rather than a stream's seek and read (sequential windows)
     */
    StreamPool(FileSystem fs, Path path, int maxStreams, boolean positional) {
        if (maxStreams < 1) {
            throw new IllegalArgumentException("streams per file must be >= 1: " + maxStreams);
        }
        this.fs = fs;
        this.path = path;
        this.permits = new Semaphore(maxStreams);
        this.positional = positional && fs.isDistributedFS();
        this.localFile = positional ? localFile(fs, path) : null;
    }

    /** {@code path} as a local file if {@code fs} is Flink's local file system, else null. */
    @SuppressWarnings("unchecked")
    private static File localFile(FileSystem fs, Path path) {
        FileSystem inner =
                fs instanceof WrappingProxy
                        ? WrappingProxyUtil.stripProxy((WrappingProxy<FileSystem>) fs)
                        : fs;
        return inner instanceof LocalFileSystem ? ((LocalFileSystem) inner).pathToFile(path) : null;
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
                    new InterruptedIOException("interrupted waiting for a read source of " + path);
            io.initCause(e);
            throw io;
        }
        ReadSource in = null;
        try {
            in = idle.pollFirst();
            if (in == null) {
                in =
                        localFile != null
                                ? LocalChannelReadSource.open(localFile)
                                : new StreamReadSource(fs.open(path), positional);
                openStreams.incrementAndGet();
            }
            in.readFully(position, buf, off, len);
            if (in.positional()) {
                positionalReads.incrementAndGet();
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

    private void giveBack(ReadSource in) {
        if (closed) {
            closeQuietly(in);
            return;
        }
        idle.offerFirst(in);
        if (closed) {
            // close() may have drained the idle sources just before our offer
            drain();
        }
    }

    /** Closes idle sources now and borrowed ones when they come back. Idempotent. */
    void close() {
        closed = true;
        drain();
    }

    private void drain() {
        ReadSource in;
        while ((in = idle.pollFirst()) != null) {
            closeQuietly(in);
        }
    }

    private void closeQuietly(ReadSource in) {
        openStreams.decrementAndGet();
        try {
            in.close();
        } catch (IOException ignored) {
            // the source is dropped either way; nothing was read from it that is kept
        }
    }

    /** Reads served by a positional read so far (for tests). */
    long positionalReads() {
        return positionalReads.get();
    }

    /** Sources currently open (idle or borrowed). */
    int openStreams() {
        return openStreams.get();
    }
}
