package io.github.flinkstate.changelog.upload;

import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.annotation.Nullable;
import javax.annotation.concurrent.GuardedBy;
import javax.annotation.concurrent.ThreadSafe;

/**
 * One batch handed to the upload threads: its tasks, the {@link HedgedUpload} writing it (once
 * started) and whether its outcome is decided. The outcome is decided exactly once, by whichever
 * comes first: the upload's result, its deadline, or the storage closing.
 *
 * <p>Thread safety: thread-safe.
 */
@ThreadSafe
final class BatchUpload {

    private final List<UploadTask> tasks;
    private final AtomicBoolean settled = new AtomicBoolean();

    @GuardedBy("this")
    @Nullable
    private HedgedUpload hedged;

    BatchUpload(List<UploadTask> tasks) {
        this.tasks = tasks;
    }

    List<UploadTask> tasks() {
        return tasks;
    }

    @GuardedBy("this")
    @Nullable
    private ScheduledFuture<?> deadline;

    /** Decides the outcome; true for the one caller that did. Cancels the deadline timer. */
    boolean settle() {
        if (!settled.compareAndSet(false, true)) {
            return false;
        }
        ScheduledFuture<?> timer;
        synchronized (this) {
            timer = deadline;
            deadline = null;
        }
        if (timer != null) {
            timer.cancel(false); // drops the timer's reference to this batch's bytes
        }
        return true;
    }

    /** Records the deadline timer, to be cancelled when the outcome is decided. */
    void setDeadline(ScheduledFuture<?> timer) {
        synchronized (this) {
            if (!settled.get()) {
                deadline = timer;
                return;
            }
        }
        timer.cancel(false);
    }

    boolean isSettled() {
        return settled.get();
    }

    /** Records the started upload; false (and nothing recorded) when already given up. */
    synchronized boolean attach(HedgedUpload upload) {
        if (settled.get()) {
            return false;
        }
        this.hedged = upload;
        return true;
    }

    @Nullable
    synchronized HedgedUpload hedged() {
        return hedged;
    }
}
