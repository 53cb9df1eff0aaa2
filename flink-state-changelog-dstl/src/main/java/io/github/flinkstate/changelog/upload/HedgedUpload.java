package io.github.flinkstate.changelog.upload;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import javax.annotation.concurrent.GuardedBy;
import javax.annotation.concurrent.ThreadSafe;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes one batch image to a new DSTL file with hedging: when an attempt has not finished within
 * the hedging delay ({@link HedgeDelay}, chosen once per batch), another attempt writes the same
 * bytes to another new file while the first keeps running; an attempt that fails is retried after a
 * delay. The first successful attempt wins; the files of all other attempts (late successes and
 * failures alike) are deleted.
 *
 * <p>Thread safety: thread-safe; attempts run on the upload executor, timeouts on the timer.
 *
 * <p>A winner interrupts the threads of the attempts still running, whose writes are no longer
 * needed; each deletes its file when it returns.
 *
 * <p>Giving up: {@link #abandon} ends the upload at once (the owner's deadline, or the storage
 * closing): no new attempt starts, the result fails, and the threads of running attempts are
 * interrupted, so a write hung on the file system is abandoned rather than waited for; such an
 * attempt deletes its file when it returns.
 *
 * <p>Invariants: (1) at most {@code maxAttempts} attempts start; (2) the result future completes
 * exactly once: with the winner's handle, or exceptionally when no attempt is running and no
 * attempt is left, or when abandoned; (3) every file except the winner's is deleted once its
 * attempt ends; (4) only threads registered in {@code runningThreads} are ever interrupted, and a
 * thread is unregistered before its attempt deletes files or completes the result.
 */
@ThreadSafe
final class HedgedUpload {

    private static final Logger LOG = LoggerFactory.getLogger(HedgedUpload.class);

    private final byte[] image;
    private final Supplier<Path> newPath;
    private final Executor uploadExecutor;
    private final ScheduledExecutorService timer;
    private final HedgeDelay hedgeDelay;
    private final Duration timeout;
    private final Duration retryDelay;
    private final int maxAttempts;
    private final UploadMetrics metrics;
    private final CompletableFuture<FileStateHandle> result = new CompletableFuture<>();

    @GuardedBy("this")
    private int started;

    @GuardedBy("this")
    private int running;

    @GuardedBy("this")
    private boolean retryScheduled;

    @GuardedBy("this")
    private boolean done;

    @GuardedBy("this")
    private Throwable failures;

    /** The files of the attempts started so far, for the final error. */
    @GuardedBy("this")
    private final List<Path> attemptPaths = new ArrayList<>();

    /**
     * The hedging timer of the latest attempt, until the result is decided: its task holds this
     * upload, image included, until it fires, so a decided upload cancels it.
     */
    @GuardedBy("this")
    private ScheduledFuture<?> hedgeTimer;

    /** The attempt {@link #hedgeTimer} belongs to. */
    @GuardedBy("this")
    private int hedgeTimerAttempt;

    /** Threads of running attempts, by attempt number; interrupted when abandoned. */
    @GuardedBy("this")
    private final Map<Integer, Thread> runningThreads = new HashMap<>();

    /** Attempts interrupted because another one won: their errors are no failures. */
    @GuardedBy("this")
    private final Set<Integer> lostToWinner = new HashSet<>();

    HedgedUpload(
            byte[] image,
            Supplier<Path> newPath,
            Executor uploadExecutor,
            ScheduledExecutorService timer,
            HedgeDelay hedgeDelay,
            Duration retryDelay,
            int maxAttempts,
            UploadMetrics metrics) {
        this.image = image;
        this.newPath = newPath;
        this.uploadExecutor = uploadExecutor;
        this.timer = timer;
        this.hedgeDelay = hedgeDelay;
        this.timeout = hedgeDelay.forImage(image.length);
        this.retryDelay = retryDelay;
        this.maxAttempts = maxAttempts;
        this.metrics = metrics;
    }

    CompletableFuture<FileStateHandle> start() {
        startAttempt(false);
        return result;
    }

    private void startAttempt(boolean hedge) {
        final int attempt;
        final Path path = newPath.get();
        synchronized (this) {
            if (done || started >= maxAttempts) {
                return;
            }
            attempt = ++started;
            attemptPaths.add(path);
            running++;
            retryScheduled = false;
        }
        metrics.attemptStarted(hedge);
        try {
            uploadExecutor.execute(() -> runAttempt(attempt, path));
        } catch (RejectedExecutionException e) {
            onAttemptDone(attempt, path, e);
            return;
        }
        ScheduledFuture<?> scheduled;
        try {
            scheduled =
                    timer.schedule(
                            () -> onTimeout(attempt), timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            LOG.debug("Timer shut down; attempt {} will not be hedged", attempt);
            return;
        }
        ScheduledFuture<?> cancel;
        synchronized (this) {
            // only the latest attempt is hedged: an earlier attempt's timer hedges nothing, also
            // when this thread stores its timer after a later attempt stored its own
            if (done || attempt < hedgeTimerAttempt) {
                cancel = scheduled;
            } else {
                cancel = hedgeTimer;
                hedgeTimer = scheduled;
                hedgeTimerAttempt = attempt;
            }
        }
        if (cancel != null) {
            cancel.cancel(false);
        }
    }

    private void runAttempt(int attempt, Path path) {
        synchronized (this) {
            if (done) {
                // abandoned while queued: do not even start writing
                running--;
                return;
            }
            runningThreads.put(attempt, Thread.currentThread());
        }
        Throwable error = null;
        long startNanos = System.nanoTime();
        try {
            FileSystem fs = path.getFileSystem();
            try (FSDataOutputStream out = fs.create(path, FileSystem.WriteMode.NO_OVERWRITE)) {
                out.write(image);
            }
            hedgeDelay.record(System.nanoTime() - startNanos, image.length);
        } catch (Throwable t) {
            error = t;
        }
        boolean lost;
        synchronized (this) {
            runningThreads.remove(attempt);
            lost = lostToWinner.remove(attempt);
        }
        // an interrupt meant for the write must not break the clean-up below or the next task
        Thread.interrupted();
        if (lost && error != null) {
            // it ran at least this long: its time still counts for the hedging delay
            hedgeDelay.record(System.nanoTime() - startNanos, image.length);
            onLoserDone(attempt, path);
        } else {
            onAttemptDone(attempt, path, error);
        }
    }

    /** An attempt interrupted because another one won: its file goes, nothing failed. */
    private void onLoserDone(int attempt, Path path) {
        synchronized (this) {
            running--;
        }
        LOG.debug("DSTL upload attempt {} to {} stopped: another attempt won", attempt, path);
        deleteQuietly(path, true);
    }

    /**
     * Interrupts the threads of the running attempts. REQUIRES the lock: a registered thread is
     * still inside its attempt, so the interrupt cannot reach later work of that thread.
     */
    @GuardedBy("this")
    private int interruptRunning() {
        runningThreads.values().forEach(Thread::interrupt);
        return runningThreads.size();
    }

    /**
     * Gives the upload up: no further attempt starts, the result fails with {@code reason}, and
     * running attempts are interrupted. Does nothing when the result is already decided.
     *
     * @return whether this call decided the result
     */
    boolean abandon(IOException reason) {
        int interrupted;
        synchronized (this) {
            if (done) {
                return false;
            }
            done = true;
            interrupted = interruptRunning();
        }
        cancelTimer();
        if (interrupted > 0) {
            LOG.warn(
                    "Abandoned {} running DSTL upload attempt(s): {}",
                    interrupted,
                    reason.getMessage());
        }
        result.completeExceptionally(reason);
        return true;
    }

    private void onTimeout(int attempt) {
        boolean hedge;
        synchronized (this) {
            // hedge only when the timed-out attempt is the latest one and nothing else is pending
            hedge = !done && !retryScheduled && attempt == started && started < maxAttempts;
        }
        if (hedge) {
            LOG.info(
                    "DSTL upload attempt {} did not finish within {}; starting a hedged attempt",
                    attempt,
                    timeout);
            startAttempt(true);
        }
    }

    private void onAttemptDone(int attempt, Path path, Throwable error) {
        FileStateHandle winner = null;
        Throwable finalFailure = null;
        String attempts = null;
        boolean deleteFile = false;
        boolean retry = false;
        int losersInterrupted = 0;
        synchronized (this) {
            running--;
            if (error == null) {
                if (done) {
                    deleteFile = true;
                } else {
                    done = true;
                    winner = new FileStateHandle(path, image.length);
                    // the losers' writes are not needed any more: one hung on the file system
                    // would otherwise keep its upload thread (and the image) for as long as the
                    // file system keeps it, after every deadline of this upload was cancelled
                    lostToWinner.addAll(runningThreads.keySet());
                    losersInterrupted = interruptRunning();
                }
            } else {
                deleteFile = true;
                if (failures == null) {
                    failures = error;
                } else if (failures != error) {
                    failures.addSuppressed(error);
                }
                if (!done && running == 0 && !retryScheduled) {
                    if (started < maxAttempts) {
                        retry = true;
                        retryScheduled = true;
                    } else {
                        done = true;
                        finalFailure = failures;
                        attempts = started + " attempt(s) (" + attemptPaths + ")";
                    }
                }
            }
        }
        if (error != null) {
            metrics.attemptFailed();
            LOG.warn("DSTL upload attempt {} to {} failed: {}", attempt, path, error.toString());
        }
        if (deleteFile) {
            deleteQuietly(path, error == null);
        }
        if (winner != null || finalFailure != null) {
            cancelTimer();
        }
        if (losersInterrupted > 0) {
            LOG.debug(
                    "DSTL upload attempt {} won; interrupted {} slower attempt(s)",
                    attempt,
                    losersInterrupted);
        }
        if (winner != null) {
            result.complete(winner);
        } else if (finalFailure != null) {
            result.completeExceptionally(
                    new IOException(
                            "DSTL upload failed after "
                                    + attempts
                                    + ": "
                                    + finalFailure.getMessage(),
                            finalFailure));
        } else if (retry) {
            scheduleRetry();
        }
    }

    /** Cancels the hedging timer of a decided upload. */
    private void cancelTimer() {
        ScheduledFuture<?> t;
        synchronized (this) {
            t = hedgeTimer;
            hedgeTimer = null;
        }
        if (t != null) {
            t.cancel(false);
        }
    }

    private void scheduleRetry() {
        try {
            timer.schedule(() -> startAttempt(false), retryDelay.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            synchronized (this) {
                done = true;
            }
            cancelTimer();
            result.completeExceptionally(new IOException("DSTL storage closed", e));
        }
    }

    private static void deleteQuietly(Path path, boolean loser) {
        try {
            path.getFileSystem().delete(path, false);
            LOG.debug("Deleted {} DSTL file {}", loser ? "losing hedged" : "failed", path);
        } catch (IOException | RuntimeException e) {
            // a file system may throw unchecked: the result must still be decided by the caller
            LOG.warn("Could not delete orphaned DSTL file {}", path, e);
        }
    }
}
