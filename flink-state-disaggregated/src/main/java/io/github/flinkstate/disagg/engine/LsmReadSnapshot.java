package io.github.flinkstate.disagg.engine;

import io.github.flinkstate.disagg.engine.iterator.LsmIterator;
import io.github.flinkstate.disagg.engine.key.KeyRange;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A point-in-time read view of an {@link LsmStore}: frozen memtables and a pinned version, so reads
 * through it never see later writes (iteration while the caller modifies the store, as Flink's
 * {@code applyToAllKeys} does).
 *
 * <p>Thread safety: reads are thread-safe. {@link #close()} unpins the view once it and every
 * iterator opened from it are closed; iterators stay usable after {@link #close()} until closed. No
 * scan starts after {@link #close()}, and no read after the view was released.
 */
public final class LsmReadSnapshot implements AutoCloseable {

    private final LsmStore store;
    private final ReadPath.View view;
    private final Runnable release;
    private final AtomicInteger pins = new AtomicInteger(1);
    private final AtomicBoolean closed = new AtomicBoolean();

    LsmReadSnapshot(LsmStore store, ReadPath.View view, Runnable release) {
        this.store = store;
        this.view = view;
        this.release = release;
    }

    /**
     * The value of {@code key} as of the view, or null.
     *
     * @throws IllegalStateException if the view was released (closed, its iterators too)
     */
    public byte[] get(byte[] key) throws IOException {
        pin();
        try {
            return store.get(view, key);
        } finally {
            unpin();
        }
    }

    /**
     * Live entries of {@code range} as of the view; close the iterator.
     *
     * @throws IllegalStateException if this snapshot was closed
     */
    public LsmIterator scan(KeyRange range) throws IOException {
        if (closed.get()) {
            throw new IllegalStateException("The read snapshot is closed");
        }
        pin();
        try {
            return store.scan(view, range, this::unpin);
        } catch (Throwable e) { // an Error too, or the view stays pinned
            unpin();
            throw e;
        }
    }

    /** Live entries under {@code prefix} as of the view. */
    public LsmIterator scanPrefix(byte[] prefix) throws IOException {
        return scan(KeyRange.ofPrefix(prefix.clone()));
    }

    /**
     * Takes a pin unless the view was already released: a pin taken after the last release would
     * release the view a second time (dropping a version the store still uses).
     */
    private void pin() {
        if (pins.getAndUpdate(p -> p == 0 ? 0 : p + 1) == 0) {
            throw new IllegalStateException("The read snapshot is closed");
        }
    }

    private void unpin() {
        if (pins.decrementAndGet() == 0) {
            release.run();
        }
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            unpin();
        }
    }
}
