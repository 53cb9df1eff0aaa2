package io.github.flinkstate.changelog.upload;

import io.github.flinkstate.changelog.DfsChangelogOptions;
import io.github.flinkstate.changelog.DfsChangelogSettings;
import io.github.flinkstate.changelog.format.BatchFileImage;
import io.github.flinkstate.changelog.registry.TaskFileRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
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
 * <p>Checkpoint alignment: the subtasks of a job reach a checkpoint at different moments (barrier
 * alignment, back-pressure), often more than {@code persist-delay} apart, so their persist requests
 * would each cut a file. A checkpoint's request therefore waits for the same checkpoint's requests
 * of all other open writers ({@link #persist}; also those with nothing to upload count), up to
 * {@code batch.checkpoint-max-wait}: the batch is cut when the last one arrives. Writers that asked
 * for none of the last checkpoints are not waited for ({@link CheckpointRequests}). The checkpoint
 * cannot complete before its last writer's request anyway, so the wait costs its completion time
 * nothing but the upload of the earlier requests' bytes together with the last one's. Every task is
 * encoded ({@link UploadTask#encode}) on an upload thread as soon as it is queued, so waiting for a
 * batch never delays the CPU work of encoding, only the write.
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
 * <p>Deadline: every batch handed to the upload threads ends within {@code upload.deadline}: when
 * it has not succeeded by then, it is given up ({@link HedgedUpload#abandon}) and its tasks fail.
 * {@link #close} gives up all running batches at once and never waits for them.
 *
 * <p>Invariants: (1) every accepted task's bytes are counted in the {@link InFlightLimiter} from
 * {@link #upload} until its callback ran; (2) every accepted task's callback runs exactly once,
 * also when the scheduler is closed or the batch is given up ({@link BatchUpload#settle} decides
 * the outcome once); (3) a flush is scheduled iff the queue is non-empty; (4) {@code running} holds
 * exactly the submitted batches whose outcome is not decided.
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
    private final HedgeDelay hedgeDelay;
    @Nullable private final LocalCopies localCopies;

    @GuardedBy("this")
    private List<UploadTask> queue = new ArrayList<>();

    @GuardedBy("this")
    private long queuedBytes;

    @GuardedBy("this")
    private ScheduledFuture<?> scheduledFlush;

    /** When {@link #scheduledFlush} runs ({@link System#nanoTime()}). */
    @GuardedBy("this")
    private long scheduledFlushAt;

    /** The writers' persist requests of the current checkpoint. */
    @GuardedBy("this")
    private final CheckpointRequests checkpointRequests = new CheckpointRequests();

    private final Supplier<Collection<?>> openWriters;

    @GuardedBy("this")
    private boolean closed;

    @GuardedBy("this")
    private final Set<BatchUpload> running = new HashSet<>();

    public BatchingUploadScheduler(
            DfsChangelogSettings settings,
            Path directory,
            TaskFileRegistry registry,
            ExecutorService uploadExecutor,
            ScheduledExecutorService timer,
            UploadMetrics metrics,
            InFlightLimiter limiter,
            HedgeDelay hedgeDelay,
            Supplier<Collection<?>> openWriters,
            @Nullable LocalCopies localCopies) {
        this.settings = settings;
        this.directory = directory;
        this.registry = registry;
        this.uploadExecutor = uploadExecutor;
        this.timer = timer;
        this.metrics = metrics;
        this.limiter = limiter;
        this.hedgeDelay = hedgeDelay;
        this.openWriters = openWriters;
        this.localCopies = localCopies;
    }

    /** Accepts a task; never blocks and never rejects (a closed scheduler fails the task). */
    public void upload(UploadTask task) {
        upload(List.of(task));
    }

    /**
     * A writer's persist request for a checkpoint, with its task (null if it has nothing to
     * upload): the batch is cut once every open writer asked for this checkpoint, or after {@code
     * batch.checkpoint-max-wait} (see the class comment). Never blocks.
     */
    public void persist(Object writer, long checkpointId, @Nullable UploadTask task) {
        List<UploadTask> batch = null;
        boolean rejected;
        synchronized (this) {
            rejected = closed;
            if (!closed) {
                // one checkpoint at a time (changelog allows no concurrent checkpoints)
                boolean allAsked = checkpointRequests.ask(writer, checkpointId, openWriters.get());
                if (task != null) {
                    enqueue(task);
                }
                if (!queue.isEmpty()) {
                    if (allAsked
                            || settings.persistDelay().isZero()
                            || settings.checkpointMaxWait().isZero()
                            || queuedBytes >= settings.persistSizeThreshold()) {
                        batch = drain();
                    } else {
                        // never sooner than an ordinary batch would be cut
                        Duration wait = settings.checkpointMaxWait();
                        flushWithin(
                                wait.compareTo(settings.persistDelay()) > 0
                                        ? wait
                                        : settings.persistDelay());
                    }
                }
            }
        }
        if (rejected && task != null) {
            task.complete(null, new IOException("The DSTL storage is closed"));
        }
        if (batch != null) {
            submit(batch);
        }
    }

    /**
     * Accepts tasks that belong in one file (they are queued together before a batch is cut); never
     * blocks and never rejects (a closed scheduler fails the tasks).
     */
    public void upload(List<UploadTask> tasks) {
        if (tasks.isEmpty()) {
            return;
        }
        List<UploadTask> batch = null;
        boolean rejected;
        synchronized (this) {
            rejected = closed;
            if (!closed) {
                tasks.forEach(this::enqueue);
                if (settings.persistDelay().isZero()
                        || queuedBytes >= settings.persistSizeThreshold()) {
                    batch = drain();
                } else {
                    flushWithin(settings.persistDelay());
                }
            }
        }
        if (rejected) {
            for (UploadTask task : tasks) {
                task.complete(null, new IOException("The DSTL storage is closed"));
            }
            return;
        }
        if (batch != null) {
            submit(batch);
        }
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
    private void enqueue(UploadTask task) {
        limiter.acquire(task.rawBytes());
        queue.add(task);
        queuedBytes += task.rawBytes();
        // encode now, while the batch waits; a failure surfaces when the batch encodes
        task.changeSets().forEach(this::encodeAhead);
    }

    /**
     * Encodes a sealed change set on an upload thread ahead of its upload, so that the checkpoint
     * that uploads it finds it encoded. Never blocks; does nothing when closing.
     */
    public void encodeAhead(ChangeSet changeSet) {
        try {
            uploadExecutor.execute(
                    () -> {
                        synchronized (this) {
                            if (closed) {
                                return; // queued when the storage closed
                            }
                        }
                        try {
                            changeSet.encode(settings.compression());
                        } catch (Throwable t) {
                            LOG.debug(
                                    "Encoding {} ahead failed; its upload will report it",
                                    changeSet,
                                    t);
                        }
                    });
        } catch (RejectedExecutionException e) {
            // closing
        }
    }

    /** Makes sure the queue is flushed within {@code delay} (sooner if already scheduled so). */
    @GuardedBy("this")
    private void flushWithin(Duration delay) {
        long at = System.nanoTime() + delay.toNanos();
        if (scheduledFlush != null) {
            if (scheduledFlushAt - at <= 0) {
                return;
            }
            scheduledFlush.cancel(false);
        }
        scheduledFlushAt = at;
        scheduledFlush =
                timer.schedule(this::flushScheduled, delay.toNanos(), TimeUnit.NANOSECONDS);
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
        BatchUpload upload = new BatchUpload(batch);
        synchronized (this) {
            if (closed) {
                upload = null;
            } else {
                running.add(upload);
            }
        }
        if (upload == null) {
            finish(batch, null, null, null, new IOException("The DSTL storage is closed"));
            return;
        }
        BatchUpload submitted = upload;
        try {
            submitted.setDeadline(
                    timer.schedule(
                            () -> giveUp(submitted, deadlineExceeded()),
                            settings.uploadDeadline().toMillis(),
                            TimeUnit.MILLISECONDS));
            uploadExecutor.execute(() -> uploadBatch(submitted));
        } catch (RejectedExecutionException e) {
            giveUp(submitted, new IOException("The DSTL storage is closed", e));
        }
    }

    private IOException deadlineExceeded() {
        return new IOException(
                "DSTL upload to "
                        + directory
                        + " did not finish within "
                        + settings.uploadDeadline()
                        + " ('"
                        + DfsChangelogOptions.UPLOAD_DEADLINE.key()
                        + "'); gave it up, the checkpoints waiting for it fail");
    }

    /** Fails the batch unless its outcome is already decided; abandons its running attempts. */
    private void giveUp(BatchUpload upload, IOException reason) {
        if (!upload.settle()) {
            return;
        }
        synchronized (this) {
            running.remove(upload);
        }
        HedgedUpload hedged = upload.hedged();
        if (hedged != null) {
            hedged.abandon(reason);
        }
        metrics.batchFailed();
        LOG.warn(
                "Giving up a DSTL upload of {} tasks: {}",
                upload.tasks().size(),
                reason.getMessage());
        finish(upload.tasks(), null, null, null, reason);
    }

    private void uploadBatch(BatchUpload upload) {
        if (upload.isSettled()) {
            return; // given up while queued
        }
        List<UploadTask> batch = upload.tasks();
        long startNanos = System.nanoTime();
        BatchFileImage image = new BatchFileImage(settings.compression());
        try {
            for (UploadTask task : batch) {
                for (byte[] segment : task.encode(settings.compression())) {
                    image.addEncodedSegment(segment);
                }
            }
        } catch (Throwable t) {
            if (upload.settle()) {
                synchronized (this) {
                    running.remove(upload);
                }
                finish(batch, null, null, null, t);
            }
            return;
        }
        HedgedUpload hedged =
                new HedgedUpload(
                        image.bytes(),
                        () -> new Path(directory, "dstl-" + UUID.randomUUID()),
                        uploadExecutor,
                        timer,
                        hedgeDelay,
                        settings.retryDelay(),
                        settings.maxAttempts(),
                        metrics);
        if (!upload.attach(hedged)) {
            return; // given up meanwhile
        }
        hedged.start()
                .whenComplete(
                        (file, failure) -> {
                            if (!upload.settle()) {
                                // given up (deadline or close): the tasks already failed
                                if (failure == null) {
                                    deleteLateWinner(file);
                                }
                                return;
                            }
                            synchronized (this) {
                                running.remove(upload);
                            }
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
        FileNaming naming = new FileNaming(); // one per file, shared by all its change sets
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
                                    localCopy,
                                    naming));
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

    private static void deleteLateWinner(FileStateHandle file) {
        try {
            file.discardState();
            LOG.debug("Deleted {}: its upload succeeded after it was given up", file);
        } catch (Exception e) {
            LOG.warn("Could not delete DSTL file {} of a given-up upload", file, e);
        }
    }

    /**
     * Fails queued tasks and gives up running batches (their attempts are interrupted); never waits
     * for the file system.
     */
    @Override
    public void close() {
        List<UploadTask> pending;
        List<BatchUpload> toGiveUp;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            pending = drain();
            toGiveUp = new ArrayList<>(running);
        }
        IOException closedError = new IOException("The DSTL storage is closed");
        finish(pending, null, null, null, closedError);
        for (BatchUpload upload : toGiveUp) {
            giveUp(upload, closedError);
        }
    }
}
