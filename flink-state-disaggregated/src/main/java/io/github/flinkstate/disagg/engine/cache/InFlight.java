package io.github.flinkstate.disagg.engine.cache;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * Waiting for a load that another thread runs (a block read, a file open): callers that miss the
 * same thing join the first caller's future instead of reading again. The waiter gets the loader's
 * failure as its own exception, so each thread's stack shows where it waited.
 *
 * <p>Stateless and thread-safe.
 */
public final class InFlight {

    private InFlight() {}

    /**
     * The result of {@code load}, waiting for it.
     *
     * @param what what is waited for, for the message of an interruption
     */
    public static <T> T await(CompletableFuture<T> load, String what) throws IOException {
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
