package io.github.flinkstate.disagg.backend;

import java.lang.ref.PhantomReference;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.annotation.concurrent.GuardedBy;
import javax.annotation.concurrent.ThreadSafe;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a keyed backend's release (close its store, local disk cache and slot-memory lease) exactly
 * once: when the backend is disposed, or, if nobody ever disposes it, after the garbage collector
 * found it unreachable.
 *
 * <p>Why: Flink's changelog backend builds this backend and then replays its log into it; when the
 * replay fails (a missing or corrupt DSTL file, a cancellation) the exception leaves Flink's
 * restore without the backend being disposed. Such a backend used to keep its local cache directory
 * locked, its memtable charges on the slot's memory and the engine files its replay flushed, until
 * the TaskManager ended: one set per failed attempt.
 *
 * <p>The release action must not reference the backend (it would then never become unreachable). A
 * release found by the collector runs on a watcher thread, which exists only while some registered
 * backend is neither released nor collected, and ends after {@link #IDLE_MILLIS} without one: no
 * thread outlives the backends (nor pins the class loader that loaded them). The collector may take
 * until a full collection to find an abandoned backend; that is the delay.
 *
 * <p>Thread safety: thread-safe.
 */
@ThreadSafe
final class AbandonedBackendRelease extends PhantomReference<Object> {

    private static final Logger LOG = LoggerFactory.getLogger(AbandonedBackendRelease.class);

    /** The watcher ends after this long with no registration left. */
    static final long IDLE_MILLIS = 10_000;

    private static final ReferenceQueue<Object> COLLECTED = new ReferenceQueue<>();

    /** Registrations not released yet: they keep themselves reachable until they run. */
    private static final Set<AbandonedBackendRelease> PENDING = ConcurrentHashMap.newKeySet();

    @GuardedBy("AbandonedBackendRelease.class")
    private static Thread watcher;

    private final String backend;
    private final Runnable release;
    private final AtomicBoolean done = new AtomicBoolean();

    private AbandonedBackendRelease(Object owner, String backend, Runnable release) {
        super(owner, COLLECTED);
        this.backend = backend;
        this.release = release;
    }

    /**
     * Registers {@code release} for {@code owner}, described by {@code backend} in the log line of
     * a release the collector triggers. {@code release} must not reference {@code owner}.
     */
    static AbandonedBackendRelease register(Object owner, String backend, Runnable release) {
        AbandonedBackendRelease r = new AbandonedBackendRelease(owner, backend, release);
        synchronized (AbandonedBackendRelease.class) {
            PENDING.add(r);
            if (watcher == null) {
                watcher =
                        new Thread(AbandonedBackendRelease::watch, "disaggregated-backend-release");
                watcher.setDaemon(true);
                // not the task's user-code class loader: the thread must not pin it
                watcher.setContextClassLoader(AbandonedBackendRelease.class.getClassLoader());
                watcher.start();
            }
        }
        return r;
    }

    /** Runs the release now (the backend is disposed), unless it ran already. */
    void releaseNow() {
        if (done.compareAndSet(false, true)) {
            clear();
            PENDING.remove(this);
            release.run();
        }
    }

    /** Whether the release has run or is running. */
    boolean released() {
        return done.get();
    }

    private void releaseCollected() {
        if (done.compareAndSet(false, true)) {
            PENDING.remove(this);
            LOG.warn(
                    "Releasing {}: it was dropped without being disposed (as Flink's changelog"
                            + " backend does when the replay of its log fails); closing its store,"
                            + " local cache and memory",
                    backend);
            try {
                release.run();
            } catch (RuntimeException | Error e) {
                LOG.warn("Could not fully release {}", backend, e);
            }
        }
    }

    private static void watch() {
        while (true) {
            Reference<?> collected;
            try {
                collected = COLLECTED.remove(IDLE_MILLIS);
            } catch (InterruptedException e) {
                collected = null; // nobody interrupts it on purpose: go on as if idle
            }
            if (collected != null) {
                ((AbandonedBackendRelease) collected).releaseCollected();
                continue;
            }
            synchronized (AbandonedBackendRelease.class) {
                if (PENDING.isEmpty()) {
                    watcher = null;
                    return;
                }
            }
        }
    }

    /** For tests: whether the watcher thread is running. */
    static synchronized boolean watching() {
        return watcher != null;
    }
}
