package io.github.flinkstate.disagg.engine.sst;

import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.flink.core.fs.ByteBufferReadable;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

/**
 * The streams over one file, so that concurrent reads of the file (point lookups of several
 * threads, short scans) run in parallel instead of queueing on one stream. A reader has three
 * pools: one of {@code streamsPerFile} concurrent reads for point reads, and one of a single read
 * each for the readahead of compactions and of long scans ({@link Readahead}), which thus never
 * wait for a point read.
 *
 * <p>Two ways to read. A pool made for positional reads shares one stream between all its reads
 * when the file system's streams offer a positional read ({@link ByteBufferReadable#read(long,
 * ByteBuffer)}; Flink's local and Hadoop streams do, HDFS serves it as a "pread" that several
 * threads may issue on one stream): no seek, and one stream open however many reads run. Otherwise
 * (a file system without it, or the sequential pools, whose large consecutive windows are what a
 * stream's seek and read serve best) a read borrows a stream (opening one lazily when none is
 * idle), seeks, reads and hands it back, so a stream serves one read at a time.
 *
 * <p>Bounds: at most {@code maxStreams} reads of the file run at once (a semaphore; further reads
 * wait), so at most that many streams are open (one when positional reads are shared).
 *
 * <p>Errors: a read that fails discards the stream it used (its position or connection may be
 * broken): a borrowed stream is closed at once, the shared stream once the reads still using it
 * end; the next read opens a fresh one, so one failure never poisons the pool. The permit is always
 * given back.
 *
 * <p>After {@link #close()} (reader evicted or closed), idle and shared streams are closed at once
 * (a shared one once its reads end) and borrowed ones when they come back; reads still work, each
 * opening and closing its own stream, so a reader evicted under an iterator keeps working.
 *
 * <p>Thread safety: thread-safe. A borrowed stream is used by one thread at a time; the shared
 * stream only through its positional read.
 */
final class StreamPool {

    private final FileSystem fs;
    private final Path path;
    private final Semaphore permits;
    private final boolean positional;
    private final ConcurrentLinkedDeque<FSDataInputStream> idle = new ConcurrentLinkedDeque<>();
    private final AtomicInteger openStreams = new AtomicInteger();
    private final AtomicReference<Shared> shared = new AtomicReference<>();
    private final Object opening = new Object();
    private volatile boolean closed;

    /** The file system's streams have no positional read: borrow streams instead. */
    private volatile boolean noPositionalRead;

    /**
     * @param positional whether reads should share one stream through its positional read, when the
     *     file system's streams offer one
     */
    StreamPool(FileSystem fs, Path path, int maxStreams, boolean positional) {
        if (maxStreams < 1) {
            throw new IllegalArgumentException("streams per file must be >= 1: " + maxStreams);
        }
        this.fs = fs;
        this.path = path;
        this.permits = new Semaphore(maxStreams);
        this.positional = positional;
    }

    /**
     * The stream that positional reads share, and how many hold it: the pool's own reference (until
     * the stream is retired) plus one per read using it. Closed when the count reaches 0.
     */
    private final class Shared {
        final FSDataInputStream in;
        final AtomicInteger holders = new AtomicInteger(1);

        Shared(FSDataInputStream in) {
            this.in = in;
        }

        /** Takes a hold for a read; false if the stream was retired and is closing. */
        boolean hold() {
            for (int h = holders.get(); h > 0; h = holders.get()) {
                if (holders.compareAndSet(h, h + 1)) {
                    return true;
                }
            }
            return false;
        }

        void release() {
            if (holders.decrementAndGet() == 0) {
                closeQuietly(in);
            }
        }

        /** Stops handing the stream out; it closes once the reads holding it end. */
        void retire() {
            if (shared.compareAndSet(this, null)) {
                release(); // the pool's own reference
            }
        }
    }

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
            Shared s = positional && !noPositionalRead && !closed ? holdShared() : null;
            if (s != null) {
                try {
                    readPositional(s.in, position, buf, off, len);
                } catch (IOException | RuntimeException e) {
                    s.retire();
                    throw e;
                } finally {
                    s.release();
                }
                return;
            }
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

    /**
     * A hold on the shared stream, opening it if there is none; null if the file system's streams
     * have no positional read (the stream opened to find out becomes an idle one) or the pool was
     * closed meanwhile.
     */
    private Shared holdShared() throws IOException {
        while (true) {
            Shared s = shared.get();
            if (s == null) {
                synchronized (opening) {
                    s = shared.get();
                    if (s == null) {
                        if (noPositionalRead || closed) {
                            return null;
                        }
                        FSDataInputStream in = fs.open(path);
                        openStreams.incrementAndGet();
                        if (!(in instanceof ByteBufferReadable)) {
                            noPositionalRead = true;
                            giveBack(in);
                            return null;
                        }
                        s = new Shared(in);
                        shared.set(s);
                        if (closed) {
                            s.retire(); // close() may have looked just before the set
                            return null;
                        }
                    }
                }
            }
            if (s.hold()) {
                return s;
            }
            shared.compareAndSet(s, null); // retired and closing: open another
        }
    }

    /**
     * Reads exactly {@code len} bytes at {@code position} with positional reads, which leave the
     * stream's position alone. Each call gets a buffer starting at its own array offset: Flink's
     * Hadoop stream fills a heap buffer from its array offset, whatever the buffer's position, and
     * does not move the position, while Flink's local stream does.
     */
    private void readPositional(FSDataInputStream in, long position, byte[] buf, int off, int len)
            throws IOException {
        ByteBufferReadable pread = (ByteBufferReadable) in;
        int done = 0;
        while (done < len) {
            int n =
                    pread.read(
                            position + done, ByteBuffer.wrap(buf, off + done, len - done).slice());
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
        Shared s = shared.get();
        if (s != null) {
            s.retire();
        }
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

    /** Streams currently open (idle, borrowed or shared). */
    int openStreams() {
        return openStreams.get();
    }
}
