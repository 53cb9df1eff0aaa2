package io.github.flinkstate.disagg.engine.memtable;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A byte budget for the memtables of several stores (the keyed backends of one task slot). Each
 * store charges what its memtables hold, from the first write into a memtable until that memtable
 * is flushed or the store closes. While the total is over the limit, a store that writes rotates
 * its active memtable as soon as it holds {@link #MIN_ROTATE_BYTES} (instead of waiting until it
 * reaches its own size limit), so the flushes bring the total back under the limit.
 *
 * <p>It is a soft limit: the total can exceed it by what the stores write while their flushes run
 * (each store still stalls its writes at its own count of frozen memtables).
 *
 * <p>Thread safety: thread-safe, lock-free.
 */
public final class WriteBufferBudget {

    /** The smallest memtable a store rotates early because the budget is exceeded. */
    public static final long MIN_ROTATE_BYTES = 256L << 10;

    private final long limitBytes;
    private final AtomicLong usedBytes = new AtomicLong();

    public WriteBufferBudget(long limitBytes) {
        if (limitBytes <= 0) {
            throw new IllegalArgumentException("write buffer budget must be > 0: " + limitBytes);
        }
        this.limitBytes = limitBytes;
    }

    /** Adds {@code bytes} (negative: gives them back). */
    public void charge(long bytes) {
        usedBytes.addAndGet(bytes);
    }

    /** Whether the stores hold more than the limit. */
    public boolean exceeded() {
        return usedBytes.get() > limitBytes;
    }

    public long limitBytes() {
        return limitBytes;
    }

    public long usedBytes() {
        return usedBytes.get();
    }
}
