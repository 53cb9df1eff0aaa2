package io.github.flinkstate.changelog;

import io.github.flinkstate.changelog.read.DfsChangelogStorageView;
import io.github.flinkstate.changelog.registry.TaskFileRegistry;
import io.github.flinkstate.changelog.upload.BatchingUploadScheduler;
import io.github.flinkstate.changelog.upload.DfsChangelogWriter;
import io.github.flinkstate.changelog.upload.HedgeDelay;
import io.github.flinkstate.changelog.upload.InFlightLimiter;
import io.github.flinkstate.changelog.upload.LocalCopies;
import io.github.flinkstate.changelog.upload.PreemptiveUploads;
import io.github.flinkstate.changelog.upload.UploadMetrics;
import java.io.File;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.annotation.concurrent.ThreadSafe;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.operators.MailboxExecutor;
import org.apache.flink.core.fs.Path;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.io.AvailabilityProvider;
import org.apache.flink.runtime.state.ChangelogTaskLocalStateStore;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.LocalRecoveryConfig;
import org.apache.flink.runtime.state.LocalSnapshotDirectoryProvider;
import org.apache.flink.runtime.state.changelog.ChangelogStateHandleStreamImpl;
import org.apache.flink.runtime.state.changelog.LocalChangelogRegistry;
import org.apache.flink.runtime.state.changelog.LocalChangelogRegistryImpl;
import org.apache.flink.runtime.state.changelog.StateChangelogHandleReader;
import org.apache.flink.runtime.state.changelog.StateChangelogStorage;
import org.apache.flink.util.concurrent.ExecutorThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code dfs-batched} changelog storage of one job on one TaskManager: every writer (one per
 * keyed operator subtask) shares its upload scheduler, so the changes of all tasks go to the same
 * few files under {@code <base-path>/<job-id>/dstl/}.
 *
 * <p>Thread safety: thread-safe.
 *
 * <p>Local recovery: when local backup is enabled, every uploaded file is also written to the job's
 * task-owned local state directory; checkpoints then carry a task-local changelog handle, whose
 * files Flink's {@code LocalChangelogRegistry} (kept here, one per storage) deletes once a later
 * checkpoint is confirmed.
 *
 * <p>Lifecycle: created by {@link DfsBatchedChangelogStorageFactory} when the first task of the job
 * starts on the TaskManager; closed when the job leaves it. Flink closes it on the TaskManager's
 * RPC main thread, so {@link #close()} never waits for the file system: it fails queued uploads,
 * gives up running ones (interrupting their attempts, whose files are deleted when they return) and
 * lets already scheduled deletions finish on their (daemon) threads.
 *
 * <p>Threads: all pools use Flink's {@link ExecutorThreadFactory} (daemon threads named {@code
 * dstl-*}), so a storage that is never closed cannot keep a JVM alive.
 */
@ThreadSafe
public final class DfsBatchedChangelogStorage
        implements StateChangelogStorage<ChangelogStateHandleStreamImpl> {

    private static final Logger LOG = LoggerFactory.getLogger(DfsBatchedChangelogStorage.class);

    private final DfsChangelogSettings settings;
    private final Path directory;
    private final ExecutorService uploadExecutor;
    private final ScheduledExecutorService timer;
    private final ExecutorService discardExecutor;
    private final InFlightLimiter limiter;
    private final UploadMetrics metrics;
    private final TaskFileRegistry registry;
    private final BatchingUploadScheduler scheduler;
    private final PreemptiveUploads preemptive;
    private final HedgeDelay hedgeDelay;
    private final DfsChangelogStorageView view;
    private final LocalChangelogRegistry localRegistry;
    private final LocalCopies localCopies;
    private final AtomicInteger writerCount = new AtomicInteger();

    public DfsBatchedChangelogStorage(
            JobID jobId,
            DfsChangelogSettings settings,
            MetricGroup metricGroup,
            LocalRecoveryConfig localRecoveryConfig,
            File localTempDirectory)
            throws IOException {
        this.settings = settings;
        this.directory = new Path(new Path(settings.basePath(), jobId.toHexString()), "dstl");
        // no file-system call here: Flink creates the storage on the TaskManager's RPC main thread
        // for every job; the first upload creates the directory (under its deadline)
        settings.checkBasePathFileSystem();
        this.uploadExecutor =
                Executors.newFixedThreadPool(settings.uploadThreads(), threads("dstl-upload"));
        ScheduledThreadPoolExecutor timerPool =
                new ScheduledThreadPoolExecutor(1, threads("dstl-timer"));
        timerPool.setRemoveOnCancelPolicy(true); // cancelled deadlines free their batch at once
        this.timer = timerPool;
        this.discardExecutor =
                Executors.newFixedThreadPool(settings.discardThreads(), threads("dstl-discard"));
        this.limiter = new InFlightLimiter(settings.maxInFlightBytes());
        this.hedgeDelay =
                new HedgeDelay(
                        settings.adaptiveHedging(),
                        settings.hedgeMinDelay(),
                        settings.hedgeInitialDelay(),
                        settings.uploadTimeout());
        this.metrics =
                new UploadMetrics(metricGroup, limiter::inFlightBytes, hedgeDelay::lastDelayMillis);
        this.registry = new TaskFileRegistry(discardExecutor, settings.retainedCheckpoints());
        LocalSnapshotDirectoryProvider localDirs =
                localRecoveryConfig.isLocalBackupEnabled()
                        ? localRecoveryConfig.getLocalStateDirectoryProvider().orElse(null)
                        : null;
        if (localDirs != null) {
            this.localCopies =
                    new LocalCopies(
                            ChangelogTaskLocalStateStore.getLocalTaskOwnedDirectory(
                                    localDirs, jobId));
            this.localRegistry =
                    new LocalChangelogRegistryImpl(
                            Executors.newSingleThreadExecutor(threads("dstl-local-discard")));
        } else {
            this.localCopies = null;
            this.localRegistry = LocalChangelogRegistry.NO_OP;
        }
        this.preemptive = new PreemptiveUploads(settings.preemptivePersistThreshold(), limiter);
        this.scheduler =
                new BatchingUploadScheduler(
                        settings,
                        directory,
                        registry,
                        uploadExecutor,
                        timer,
                        metrics,
                        limiter,
                        hedgeDelay,
                        preemptive::openWriters,
                        localCopies);
        this.view = new DfsChangelogStorageView(settings, localTempDirectory);
        LOG.info(
                "Created dfs-batched changelog storage for job {} in {} (local copies: {})",
                jobId,
                directory,
                localCopies == null ? "off" : localCopies.getDirectory());
    }

    @Override
    public DfsChangelogWriter createWriter(
            String operatorId, KeyGroupRange keyGroupRange, MailboxExecutor mailboxExecutor) {
        DfsChangelogWriter writer =
                new DfsChangelogWriter(
                        operatorId + "#" + writerCount.incrementAndGet(),
                        keyGroupRange,
                        DfsBatchedChangelogStorageFactory.IDENTIFIER,
                        scheduler,
                        registry,
                        preemptive,
                        localRegistry,
                        settings.encodeAheadBytes());
        preemptive.register(writer);
        return writer;
    }

    /** The pre-emptive upload decisions shared by this storage's writers; for tests. */
    public PreemptiveUploads getPreemptiveUploads() {
        return preemptive;
    }

    @Override
    public StateChangelogHandleReader<ChangelogStateHandleStreamImpl> createReader() {
        return view.createReader();
    }

    @Override
    public AvailabilityProvider getAvailabilityProvider() {
        return limiter;
    }

    /** The directory of this job's files. */
    public Path getDirectory() {
        return directory;
    }

    public TaskFileRegistry getRegistry() {
        return registry;
    }

    public UploadMetrics getMetrics() {
        return metrics;
    }

    /**
     * After {@link #close()}: waits until no upload attempt and no scheduled deletion runs any more
     * (an interrupted attempt may still finish its write and delete its file). For tests, which
     * must not remove directories while that happens; {@code close()} itself never waits.
     *
     * @return whether both stopped within {@code timeout}
     */
    public boolean awaitBackgroundWork(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        return uploadExecutor.awaitTermination(timeout.toNanos(), TimeUnit.NANOSECONDS)
                && discardExecutor.awaitTermination(
                        Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    }

    /**
     * Never waits for an upload, and for downloads in flight at most 10 s (Flink calls it on the
     * TaskManager's RPC main thread; see {@link DfsChangelogStorageView#close}).
     */
    @Override
    public void close() throws Exception {
        scheduler.close(); // fails queued uploads, gives up running ones (interrupting them)
        // not shutdownNow(): a second interrupt could hit an abandoned or failed attempt while it
        // deletes its file (a slow HDFS or S3 call), leaving the file behind; what is still queued
        // finds its upload given up (or, to encode ahead, the scheduler closed) and ends at once
        uploadExecutor.shutdown();
        timer.shutdownNow();
        discardExecutor.shutdown(); // scheduled deletions still run; not awaited
        registry.close();
        view.close();
        localRegistry.close();
        LOG.info("Closed dfs-batched changelog storage in {}", directory);
    }

    private static ExecutorThreadFactory threads(String name) {
        return new ExecutorThreadFactory(
                name,
                (thread, error) -> LOG.error("Uncaught error in {}", thread.getName(), error));
    }
}
