package io.github.flinkstate.changelog.upload;

import io.github.flinkstate.changelog.DfsChangelogSettings;
import io.github.flinkstate.changelog.format.BatchFileImage;
import io.github.flinkstate.changelog.registry.TaskFileRegistry;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import javax.annotation.Nullable;
import javax.annotation.concurrent.GuardedBy;
import javax.annotation.concurrent.ThreadSafe;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Collects the upload tasks of all writers of one job on one TaskManager and writes them in
 * batches, one DSTL file per batch: a batch is cut when {@code persist-delay} has passed since its
 * first task, or at once when its bytes reach {@code persist-size-threshold}.
 *
 * <p>Thread safety: thread-safe. Encoding and writing run on the upload executor; the delay timer
 * and hedging timeouts on the timer; task callbacks on upload threads.
 *
 * <p>With local recovery, the winning image is also written to a local copy (same name and offsets)
 * before the callbacks run.
 *
 * <p>Ownership: a won file is {@link TaskFileRegistry#track tracked} with one reference per change
 * set <em>before</em> any callback runs, so each writer can then keep or release its references.
 *
 * <p>Invariants: (1) every accepted task's bytes are counted in the {@link InFlightLimiter} from
 * {@link #upload} until its callback ran; (2) every accepted task's callback runs exactly once,
 * also when the scheduler is closed; (3) a flush is scheduled iff the queue is non-empty.
 */
@ThreadSafe
public final class BatchingUploadScheduler implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(BatchingUploadScheduler.class);

    private final DfsChangelogSettings settings;
    private final Path directory;
    private final TaskFileRegistry registry;
    private final ExecutorService uploadExecutor;
    private final ScheduledExecutorService timer;
    private final UploadMetrics metrics;
    private final InFlightLimiter limiter;
    @Nullable private final LocalCopies localCopies;

    @GuardedBy("this")
    private List<UploadTask> queue = new ArrayList<>();

    @GuardedBy("this")
    private long queuedBytes;

    @GuardedBy("this")
    private ScheduledFuture<?> scheduledFlush;

    @GuardedBy("this")
    private boolean closed;

    public BatchingUploadScheduler(
            DfsChangelogSettings settings,
            Path directory,
            TaskFileRegistry registry,
            ExecutorService uploadExecutor,
            ScheduledExecutorService timer,
            UploadMetrics metrics,
            InFlightLimiter limiter,
            @Nullable LocalCopies localCopies) {
        this.settings = settings;
        this.directory = directory;
        this.registry = registry;
        this.uploadExecutor = uploadExecutor;
        this.timer = timer;
        this.metrics = metrics;
        this.limiter = limiter;
        this.localCopies = localCopies;
    }

    /** Accepts a task; never blocks and never rejects (a closed scheduler fails the task). */
    public void upload(UploadTask task) {
        List<UploadTask> batch = null;
        synchronized (this) {
            if (!closed) {
                limiter.acquire(task.rawBytes());
                queue.add(task);
                queuedBytes += task.rawBytes();
                if (settings.persistDelay().isZero()
                        || queuedBytes >= settings.persistSizeThreshold()) {
                    batch = drain();
                } else if (scheduledFlush == null) {
                    scheduledFlush =
                            timer.schedule(
                                    this::flushScheduled,
                                    settings.persistDelay().toMillis(),
                                    TimeUnit.MILLISECONDS);
                }
            }
        }
        if (batch == null) {
            synchronized (this) {
                if (!closed) {
                    return;
                }
            }
            task.complete(null, new IOException("The DSTL storage is closed"));
            return;
        }
        submit(batch);
    }

    private void flushScheduled() {
        List<UploadTask> batch;
        synchronized (this) {
            scheduledFlush = null;
            if (closed || queue.isEmpty()) {
                return;
            }
            batch = drain();
        }
        submit(batch);
    }

    @GuardedBy("this")
    private List<UploadTask> drain() {
        List<UploadTask> batch = queue;
        queue = new ArrayList<>();
        queuedBytes = 0;
        if (scheduledFlush != null) {
            scheduledFlush.cancel(false);
            scheduledFlush = null;
        }
        return batch;
    }

    private void submit(List<UploadTask> batch) {
        try {
            uploadExecutor.execute(() -> uploadBatch(batch));
        } catch (RejectedExecutionException e) {
            finish(batch, null, null, null, new IOException("The DSTL storage is closed", e));
        }
    }

    private void uploadBatch(List<UploadTask> batch) {
        long startNanos = System.nanoTime();
        BatchFileImage image = new BatchFileImage(settings.compression());
        try {
            for (UploadTask task : batch) {
                for (ChangeSet changeSet : task.changeSets()) {
                    image.addSegment(changeSet.changes());
                }
            }
        } catch (Throwable t) {
            finish(batch, null, null, null, t);
            return;
        }
        new HedgedUpload(
                        image.bytes(),
                        () -> new Path(directory, "dstl-" + UUID.randomUUID()),
                        uploadExecutor,
                        timer,
                        settings.uploadTimeout(),
                        settings.retryDelay(),
                        settings.maxAttempts(),
                        metrics)
                .start()
                .whenComplete(
                        (file, failure) -> {
                            if (failure == null) {
                                metrics.batchSucceeded(
                                        (System.nanoTime() - startNanos) / 1_000_000,
                                        image.length(),
                                        image.segmentCount());
                                LOG.debug(
                                        "Uploaded {} change sets of {} tasks to {} ({} bytes)",
                                        image.segmentCount(),
                                        batch.size(),
                                        file.getFilePath(),
                                        image.length());
                            } else {
                                metrics.batchFailed();
                                LOG.warn(
                                        "DSTL upload of {} change sets failed for good; the"
                                                + " checkpoints waiting for it fail",
                                        image.segmentCount(),
                                        failure);
                            }
                            StreamStateHandle local =
                                    failure == null && localCopies != null
                                            ? localCopies.write(
                                                    file.getFilePath().getName(), image.bytes())
                                            : null;
                            finish(batch, image, file, local, failure);
                        });
    }

    private void finish(
            List<UploadTask> batch,
            BatchFileImage image,
            FileStateHandle file,
            @Nullable StreamStateHandle localCopy,
            Throwable failure) {
        if (failure == null) {
            registry.track(file, image.segmentCount(), localCopy);
        }
        int segment = 0;
        for (UploadTask task : batch) {
            List<UploadResult> results = null;
            if (failure == null) {
                results = new ArrayList<>(task.changeSets().size());
                for (ChangeSet changeSet : task.changeSets()) {
                    results.add(
                            new UploadResult(
                                    changeSet.sequenceNumber(),
                                    file,
                                    image.offsetOf(segment),
                                    image.sizeOf(segment),
                                    localCopy));
                    segment++;
                }
            }
            try {
                task.complete(results, failure);
            } catch (Throwable t) {
                LOG.error("DSTL upload callback failed", t);
            } finally {
                limiter.release(task.rawBytes());
            }
        }
    }

    @Override
    public void close() {
        List<UploadTask> pending;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            pending = drain();
        }
        finish(pending, null, null, null, new IOException("The DSTL storage is closed"));
    }
}
