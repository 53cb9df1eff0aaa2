package io.github.flinkstate.changelog.read;

import io.github.flinkstate.changelog.DfsChangelogSettings;
import java.io.File;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import javax.annotation.Nullable;
import javax.annotation.concurrent.ThreadSafe;
import org.apache.flink.runtime.state.changelog.ChangelogStateHandleStreamImpl;
import org.apache.flink.runtime.state.changelog.StateChangelogHandleReader;
import org.apache.flink.runtime.state.changelog.StateChangelogStorageView;
import org.apache.flink.util.concurrent.ExecutorThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Read access to {@code dfs-batched} changelogs: creates {@link DfsChangelogReader}s that share one
 * {@link DownloadCache} (or, with the cache off, {@link InPlaceReads}) and one pool of download
 * threads (idle threads exit).
 *
 * <p>Thread safety: thread-safe.
 *
 * <p>Lifecycle: Flink caches one view per job per TaskManager and closes it when the job leaves the
 * TaskManager; closing deletes the local cache directory.
 */
@ThreadSafe
public final class DfsChangelogStorageView
        implements StateChangelogStorageView<ChangelogStateHandleStreamImpl> {

    private static final Logger LOG = LoggerFactory.getLogger(DfsChangelogStorageView.class);

    /** How long closing waits for downloads in flight (interrupted first) to end. */
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(10);

    /**
     * Runs every view's sweep of idle cached copies: one daemon thread for the JVM (a TaskManager
     * has a view per job).
     */
    private static final ScheduledThreadPoolExecutor SWEEPER = sweeper();

    private static ScheduledThreadPoolExecutor sweeper() {
        // the thread is created on a task thread: give it this class's loader as its context,
        // or it would keep the first job's user-code class loader alive as long as the JVM
        ScheduledThreadPoolExecutor s =
                new ScheduledThreadPoolExecutor(
                        1,
                        r -> {
                            Thread t = new Thread(r, "dstl-cache-sweep");
                            t.setDaemon(true);
                            t.setContextClassLoader(DfsChangelogStorageView.class.getClassLoader());
                            return t;
                        });
        s.setRemoveOnCancelPolicy(true);
        return s;
    }

    private final ThreadPoolExecutor downloadExecutor;
    @Nullable private final DownloadCache cache;
    @Nullable private final ScheduledFuture<?> sweep;
    @Nullable private final InPlaceReads inPlace;

    public DfsChangelogStorageView(DfsChangelogSettings settings, File localTempDirectory) {
        this.downloadExecutor =
                new ThreadPoolExecutor(
                        settings.downloadThreads(),
                        settings.downloadThreads(),
                        30,
                        TimeUnit.SECONDS,
                        new LinkedBlockingQueue<>(),
                        new ExecutorThreadFactory(
                                "dstl-download",
                                (thread, error) ->
                                        LOG.error(
                                                "Uncaught error in {}", thread.getName(), error)));
        this.downloadExecutor.allowCoreThreadTimeOut(true);
        this.cache =
                settings.downloadCacheEnabled()
                        ? new DownloadCache(
                                new File(localTempDirectory, "dstl-cache-" + UUID.randomUUID()),
                                downloadExecutor,
                                settings.downloadCacheIdleTimeout(),
                                CLOSE_WAIT,
                                settings.downloadStallTimeout())
                        : null;
        // idle copies go within half the idle timeout (at least every 100 ms, at most every
        // minute), whether or not another restore uses the cache
        long period =
                Math.max(100, Math.min(60_000, settings.downloadCacheIdleTimeout().toMillis() / 2));
        DownloadCache c = cache;
        this.sweep =
                c == null
                        ? null
                        : SWEEPER.scheduleWithFixedDelay(
                                c::sweepIdle, period, period, TimeUnit.MILLISECONDS);
        this.inPlace =
                cache == null
                        ? new InPlaceReads(downloadExecutor, settings.downloadStallTimeout())
                        : null;
    }

    @Override
    public StateChangelogHandleReader<ChangelogStateHandleStreamImpl> createReader() {
        return new DfsChangelogReader(cache, inPlace);
    }

    /** Number of files in the local download cache; for tests and metrics. */
    public int cachedFiles() {
        return cache == null ? 0 : cache.size();
    }

    @Override
    public void close() {
        if (sweep != null) {
            sweep.cancel(false);
        }
        downloadExecutor.shutdownNow();
        if (cache != null) {
            cache.close();
        }
    }
}
