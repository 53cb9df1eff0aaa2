package io.github.flinkstate.disagg.engine.cache;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * Waiting for a load that another thread runs (a block read, a file open): callers that miss the
 * same thing join the first caller's future instead of reading again. The waiter gets the loader's
 * failure as its own exception, so each thread's stack shows where it waited; a failure that only
 * says the loader's thread was interrupted is no failure of the waiter's read: the waiter then
 * loads again itself, without joining another thread's load (see {@link
 * #awaitUnlessInterruptedElsewhere}; a thread interrupted over and over, such as a cancelled
 * task's, could otherwise fail every waiter that keeps joining its loads).
 *
 * <p>Stateless and thread-safe.
 */
public final class InFlight {

    private InFlight() {}

    /**
     * Whether {@code load} failed only because the thread that ran it was interrupted (a cancelled
     * checkpoint's or warm-up's thread, say) while the calling thread was not: the caller should
     * then load again itself instead of failing for another thread's interrupt.
     */
    private static boolean failedByOthersInterrupt(CompletableFuture<?> load) {
        if (!load.isCompletedExceptionally() || Thread.currentThread().isInterrupted()) {
            return false;
        }
        try {
            load.join();
            return false;
        } catch (java.util.concurrent.CompletionException
                | java.util.concurrent.CancellationException e) {
            return causedByInterrupt(e.getCause());
        }
    }

    /**
     * Whether {@code failure} or one of its causes says that its thread was interrupted (an
     * interrupted I/O call, a channel closed by an interrupt); a socket timeout, also an {@link
     * InterruptedIOException}, is no interrupt.
     */
    public static boolean causedByInterrupt(Throwable failure) {
        Throwable t = failure;
        for (int depth = 0; t != null && depth < 16; t = t.getCause(), depth++) {
            if ((t instanceof InterruptedIOException
                            && !(t instanceof java.net.SocketTimeoutException)) // no interrupt
                    || t instanceof java.nio.channels.ClosedByInterruptException
                    || t instanceof InterruptedException) {
                return true;
            }
        }
        return false;
    }

    /**
     * As {@link #await}, for a caller that can load itself: null (a load never yields null) when
     * the joined load failed only because its thread was interrupted; the caller must then load
     * without joining any other thread's load. Else the result or the failure.
     */
    public static <T> T awaitUnlessInterruptedElsewhere(CompletableFuture<T> load, String what)
            throws IOException {
        try {
            return await(load, what);
        } catch (IOException e) {
            if (failedByOthersInterrupt(load)) {
                return null;
            }
            throw e;
        }
    }

    /**
     * The result of {@code load}, waiting for it.
     *
     * @param what what is waited for, for the message of an interruption
     */
    private static <T> T await(CompletableFuture<T> load, String what) throws IOException {
        try {
            return load.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            InterruptedIOException io =
                    new InterruptedIOException("interrupted waiting for " + what);
            io.initCause(e);
            throw io;
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof IOException) {
                throw new IOException(c.getMessage(), c);
            }
            if (c instanceof RuntimeException) {
                throw (RuntimeException) c;
            }
            if (c instanceof Error) {
                throw (Error) c;
            }
            throw new IOException(c);
        }
    }
}
