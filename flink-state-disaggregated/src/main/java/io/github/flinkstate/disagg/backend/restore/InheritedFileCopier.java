package io.github.flinkstate.disagg.backend.restore;

import io.github.flinkstate.disagg.engine.LsmStore;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Copies restored files that lie outside this job's directory (another job's checkpoint, a
 * savepoint) into the store's primary directory in the background, right after a restore, with
 * {@link LsmStore#rehomeAll}. After a NO_CLAIM resume Flink forces the first checkpoint to be full
 * (it may not reference the restored files); when this copy has finished, that checkpoint finds
 * nothing left to copy and only writes its meta data (docs/disaggregated.md, "The first checkpoint
 * after a NO_CLAIM resume").
 *
 * <p>Files are copied in batches of {@code batch} (each batch in parallel on the store's copy
 * threads, then swapped in), so {@link #filesLeft} moves and a close stops between or inside
 * batches. A failure only logs: the first full checkpoint copies whatever is left, as without this
 * copier. A copy never changes what the store reads: a swap replaces a file by an identical copy.
 *
 * <p>Thread safety: one background thread copies; {@link #awaitDone}, {@link #filesLeft} and {@link
 * #close} may be called from any thread.
 */
public final class InheritedFileCopier implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(InheritedFileCopier.class);

    /** How long {@link #close} waits for the copy thread to stop. */
    private static final long CLOSE_WAIT_SECONDS = 40;

    private final CountDownLatch done = new CountDownLatch(1);

    /** Original path to the path of its copy, for every file swapped in so far. */
    private final Map<String, String> copies = new ConcurrentHashMap<>();

    private final AtomicInteger left;
    private final Thread thread;
    private volatile boolean closed;

    /** Nothing to copy: done at once, no thread. */
    private InheritedFileCopier() {
        this.left = new AtomicInteger();
        this.thread = null;
        done.countDown();
    }

    private InheritedFileCopier(LsmStore store, List<String> files, int batch, String owner) {
        this.left = new AtomicInteger(files.size());
        this.thread =
                new Thread(
                        () -> run(store, files, Math.max(1, batch), owner),
                        "disagg-inherited-copy-" + owner);
        thread.setDaemon(true);
    }

    /** A copier with nothing to copy (no restore, or the option is off). */
    public static InheritedFileCopier none() {
        return new InheritedFileCopier();
    }

    /**
     * Starts copying {@code files} (paths of live restored files) on a new daemon thread named
     * after {@code owner}.
     */
    public static InheritedFileCopier start(
            LsmStore store, List<String> files, int batch, String owner) {
        if (files.isEmpty()) {
            return none();
        }
        InheritedFileCopier c = new InheritedFileCopier(store, files, batch, owner);
        c.thread.start();
        return c;
    }

    private void run(LsmStore store, List<String> files, int batch, String owner) {
        long start = System.nanoTime();
        int copied = 0;
        LOG.info("Copying {} inherited file(s) of {} in the background", files.size(), owner);
        try {
            for (int from = 0; from < files.size() && !closed; from += batch) {
                List<String> slice = files.subList(from, Math.min(files.size(), from + batch));
                Map<String, String> swapped = store.rehomeAll(slice);
                copies.putAll(swapped);
                copied += swapped.size();
                left.addAndGet(-slice.size());
            }
            if (!closed) {
                LOG.info(
                        "Copied {} inherited file(s) of {} in {} ms ({} no longer live)",
                        copied,
                        owner,
                        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start),
                        files.size() - copied);
            }
        } catch (IOException | RuntimeException e) {
            if (closed) {
                LOG.debug("Background copy of {} stopped by close", owner, e);
            } else {
                LOG.warn(
                        "Background copy of inherited files of {} failed after {} of {} file(s);"
                                + " the first full checkpoint copies the rest",
                        owner,
                        copied,
                        files.size(),
                        e);
            }
        } finally {
            done.countDown();
        }
    }

    /** Waits until the copy has ended (finished, failed or closed). */
    public void awaitDone() throws InterruptedException {
        done.await();
    }

    /** Whether the copy has ended. */
    public boolean isDone() {
        return done.getCount() == 0;
    }

    /**
     * Original path to copy path of every inherited file this copier swapped in so far. A copy may
     * since have been compacted away; callers check it is still live.
     */
    public Map<String, String> copies() {
        return Map.copyOf(copies);
    }

    /** Inherited files not copied yet (0 once done, or when nothing was to be copied). */
    public int filesLeft() {
        return isDone() ? 0 : left.get();
    }

    /**
     * Stops the copy (copies not swapped in yet are deleted by {@link LsmStore#rehomeAll}) and
     * waits up to 40 s for the thread; call before closing the store.
     */
    @Override
    public void close() {
        closed = true;
        if (thread == null || isDone()) {
            return;
        }
        thread.interrupt();
        try {
            if (!done.await(CLOSE_WAIT_SECONDS, TimeUnit.SECONDS)) {
                LOG.warn(
                        "The background copy thread {} did not stop within {} s",
                        thread.getName(),
                        CLOSE_WAIT_SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
