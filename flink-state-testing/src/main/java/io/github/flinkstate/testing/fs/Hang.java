package io.github.flinkstate.testing.fs;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;

/**
 * An injected hang: calls of one {@link FsOp} on paths matching a pattern block until {@link
 * #release()} (or {@link InjectingFileSystem#heal()}), then proceed normally. So that a forgotten
 * release never hangs a build, a blocked call gives up after the file system's hang limit with an
 * {@link IOException} naming the path. {@link #close()} releases, so a hang can be used in
 * try-with-resources.
 *
 * <p>Thread safety: thread-safe.
 */
public final class Hang implements AutoCloseable {

    private final FsOp op;
    private final Pattern paths;
    private final Duration limit;
    private final AtomicInteger callsLeft;
    private final CountDownLatch released = new CountDownLatch(1);
    private final AtomicInteger blocked = new AtomicInteger();
    private final AtomicInteger everBlocked = new AtomicInteger();

    /**
     * @param calls how many matching calls this hang catches ({@link Integer#MAX_VALUE}: all until
     *     released)
     */
    Hang(FsOp op, Pattern paths, Duration limit, int calls) {
        this.op = op;
        this.paths = paths;
        this.limit = limit;
        this.callsLeft = new AtomicInteger(calls);
    }

    /** Whether this call is caught (and, for a counted hang, uses up one catch). */
    boolean applies(FsOp op, String path) {
        if (this.op != op || released.getCount() == 0 || !paths.matcher(path).matches()) {
            return false;
        }
        return callsLeft.getAndUpdate(n -> n == Integer.MAX_VALUE || n == 0 ? n : n - 1) > 0;
    }

    void block(String path) throws IOException {
        blocked.incrementAndGet();
        everBlocked.incrementAndGet();
        try {
            if (!released.await(limit.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IOException(
                        "injected hang of "
                                + op
                                + " on "
                                + path
                                + " was not released within "
                                + limit
                                + " (the test forgot Hang.release())");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            InterruptedIOException io =
                    new InterruptedIOException("interrupted in an injected hang of " + op);
            io.initCause(e);
            throw io;
        } finally {
            blocked.decrementAndGet();
        }
    }

    /** Lets every blocked and future matching call proceed. */
    public void release() {
        released.countDown();
    }

    /** Calls blocked right now. */
    public int blockedCalls() {
        return blocked.get();
    }

    /** Calls that were blocked by this hang at some point. */
    public int totalBlockedCalls() {
        return everBlocked.get();
    }

    @Override
    public void close() {
        release();
    }
}
