package io.github.flinkstate.changelog.upload;

import java.util.concurrent.CompletableFuture;
import javax.annotation.concurrent.GuardedBy;
import javax.annotation.concurrent.ThreadSafe;
import org.apache.flink.runtime.io.AvailabilityProvider;

/**
 * Counts the bytes queued for or being uploaded and turns the storage unavailable while they reach
 * the configured maximum; Flink then pauses the input of the job's tasks (back-pressure) until
 * uploads finish.
 *
 * <p>Thread safety: thread-safe.
 *
 * <p>Invariants: (1) {@code inFlight >= 0}; (2) the availability future is done iff {@code inFlight
 * < max}.
 */
@ThreadSafe
public final class InFlightLimiter implements AvailabilityProvider {

    private final long max;

    @GuardedBy("this")
    private long inFlight;

    @GuardedBy("this")
    private CompletableFuture<?> available = AVAILABLE;

    public InFlightLimiter(long max) {
        this.max = max;
    }

    public synchronized void acquire(long bytes) {
        inFlight += bytes;
        if (inFlight >= max && available.isDone()) {
            available = new CompletableFuture<>();
        }
    }

    public void release(long bytes) {
        CompletableFuture<?> toComplete = null;
        synchronized (this) {
            inFlight -= bytes;
            if (inFlight < 0) {
                throw new IllegalStateException("Released more bytes than acquired: " + inFlight);
            }
            if (inFlight < max && !available.isDone()) {
                toComplete = available;
                available = AVAILABLE;
            }
        }
        if (toComplete != null) {
            toComplete.complete(null);
        }
    }

    public synchronized long inFlightBytes() {
        return inFlight;
    }

    @Override
    public synchronized CompletableFuture<?> getAvailableFuture() {
        return available;
    }

    @Override
    public synchronized boolean isAvailable() {
        return available.isDone();
    }
}
