package io.github.flinkstate.disagg.engine.sst;

import java.util.concurrent.atomic.LongAdder;

/**
 * Reads that reached the primary storage (the file system the SST files live on): one count and the
 * bytes per positional read of a footer, index, bloom filter, tombstone or data block. Block cache
 * hits never get here, so these are the remote round trips a store paid for.
 *
 * <p>Thread safety: thread-safe (adders; readers of many files count concurrently).
 */
public final class ReadCounters {

    private final LongAdder reads = new LongAdder();
    private final LongAdder bytes = new LongAdder();

    void record(int length) {
        reads.increment();
        bytes.add(length);
    }

    /** Positional reads issued to the primary storage. */
    public long reads() {
        return reads.sum();
    }

    /** Bytes read from the primary storage. */
    public long bytes() {
        return bytes.sum();
    }
}
