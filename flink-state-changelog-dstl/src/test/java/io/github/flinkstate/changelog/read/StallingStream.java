package io.github.flinkstate.changelog.read;

import java.io.IOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;

/**
 * A stream whose reads signal {@code reading} and block, ignoring interrupts, until {@code stalled}
 * opens; its close waits for a running read, as HDFS's does.
 */
final class StallingStream extends FSDataInputStream {

    private final FSDataInputStream in;
    private final CountDownLatch reading;
    private final CountDownLatch stalled;

    StallingStream(FSDataInputStream in, CountDownLatch reading, CountDownLatch stalled) {
        this.in = in;
        this.reading = reading;
        this.stalled = stalled;
    }

    /**
     * {@code written} behind a handle whose first opened stream is a stalling one; later opens read
     * normally. {@code opens} counts the opens.
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
                        ? new StallingStream(written.openInputStream(), reading, stalled)
                        : written.openInputStream();
            }
        };
    }

    private void stall() {
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
        stall();
        return in.read();
    }

    @Override
    public synchronized int read(byte[] b, int off, int len) throws IOException {
        stall();
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
