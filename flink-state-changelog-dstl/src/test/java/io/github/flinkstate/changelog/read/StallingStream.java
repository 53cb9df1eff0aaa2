package io.github.flinkstate.changelog.read;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;

/**
 * A stream whose every read first runs a hook, under the stream's lock as in HDFS's stream (so a
 * close waits for a running read): {@link #onFirstOpen} blocks the reads of a file's first opened
 * stream, ignoring interrupts, until a latch opens; {@link #slow} makes every read take a fixed
 * time.
 */
final class StallingStream extends FSDataInputStream {

    /** What runs before each read. */
    private interface BeforeRead {
        void run() throws IOException;
    }

    private final FSDataInputStream in;
    private final BeforeRead beforeRead;

    private StallingStream(FSDataInputStream in, BeforeRead beforeRead) {
        this.in = in;
        this.beforeRead = beforeRead;
    }

    /**
     * {@code written} behind a handle whose first opened stream signals {@code reading} at each
     * read and blocks, ignoring interrupts, until {@code stalled} opens; later opens read normally.
     * {@code opens} counts the opens.
     */
    static FileStateHandle onFirstOpen(
            FileStateHandle written,
            CountDownLatch reading,
            CountDownLatch stalled,
            AtomicInteger opens) {
        return new FileStateHandle(written.getFilePath(), written.getStateSize()) {
            @Override
            public FSDataInputStream openInputStream() throws IOException {
                return opens.incrementAndGet() == 1
                        ? new StallingStream(
                                written.openInputStream(), () -> stall(reading, stalled))
                        : written.openInputStream();
            }
        };
    }

    /**
     * {@code written} behind a handle whose every read takes {@code perRead}, counted in {@code
     * reads}.
     */
    static FileStateHandle slow(FileStateHandle written, Duration perRead, AtomicInteger reads) {
        return new FileStateHandle(written.getFilePath(), written.getStateSize()) {
            @Override
            public FSDataInputStream openInputStream() throws IOException {
                return new StallingStream(
                        written.openInputStream(),
                        () -> {
                            reads.incrementAndGet();
                            try {
                                Thread.sleep(perRead.toMillis());
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                                throw new InterruptedIOException("interrupted in a slow read");
                            }
                        });
            }
        };
    }

    private static void stall(CountDownLatch reading, CountDownLatch stalled) {
        reading.countDown();
        boolean interrupted = false;
        while (true) {
            try {
                stalled.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public synchronized int read() throws IOException {
        beforeRead.run();
        return in.read();
    }

    @Override
    public synchronized int read(byte[] b, int off, int len) throws IOException {
        beforeRead.run();
        return in.read(b, off, len);
    }

    @Override
    public synchronized void seek(long desired) throws IOException {
        in.seek(desired);
    }

    @Override
    public synchronized long getPos() throws IOException {
        return in.getPos();
    }

    @Override
    public synchronized void close() throws IOException {
        in.close();
    }
}
