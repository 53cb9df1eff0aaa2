package io.github.flinkstate.changelog.read;

import io.github.flinkstate.changelog.DfsChangelogOptions;
import io.github.flinkstate.changelog.format.SegmentDecoder;
import java.io.BufferedInputStream;
import java.io.Closeable;
import java.io.File;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.annotation.concurrent.GuardedBy;
import javax.annotation.concurrent.ThreadSafe;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.util.FileUtils;
import org.apache.flink.util.ShutdownHookUtil;
import org.apache.flink.util.TimeUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Local copies of DSTL files that live on a distributed file system: each file is downloaded at
 * most once (in parallel, on the download executor) and verified in full (its size against the
 * handle, the file header, and every segment's header and CRC32C) before it is used; later reads
 * seek in the local copy. A copy that turns out missing, short or unreadable later (local disk
 * trouble, a cleaner) is {@link #evict evicted}, so the next read downloads it again instead of
 * failing every restore on this TaskManager.
 *
 * <p>Thread safety: thread-safe.
 *
 * <p>Lifecycle: entries not used for {@code idleTimeout} are deleted when the cache is next used
 * and by {@link #sweepIdle}, which the view runs periodically; {@link #close()} waits a bounded
 * time for downloads in flight, then deletes everything; a download that starts or ends after it
 * deletes its own copy. A failed download is forgotten so the next read retries. A cache that is
 * never closed (Flink's test harness does not close the views it opens; a TaskManager may exit
 * without releasing a job) deletes its directory when the JVM exits (a shutdown hook, removed by
 * {@link #close()}).
 *
 * <p>A hanging file system: a reader waits for a download only as long as some download makes
 * progress; once no byte of any download arrived for the stall timeout, the waited-for download is
 * abandoned (forgotten, its stream closed) and the read fails naming the file and the option. The
 * next read downloads again; an abandoned download that ends later deletes its own copy.
 *
 * <p>Invariants: (1) an entry with {@code users > 0} is never deleted; (2) at most one download per
 * file path is in {@link #entries} (abandoned ones may still run).
 */
@ThreadSafe
final class DownloadCache implements Closeable {

    private static final Logger LOG = LoggerFactory.getLogger(DownloadCache.class);

    private final File directory;
    private final Executor downloadExecutor;
    private final long idleTimeoutNanos;

    @GuardedBy("this")
    private final Map<String, Entry> entries = new HashMap<>();

    private final long closeWaitNanos;

    private final long stallTimeoutNanos;

    /** When a download last started, moved bytes or ended (or a new one was asked for). */
    private volatile long lastProgressNanos = System.nanoTime();

    @GuardedBy("this")
    private boolean closed;

    /** Downloads between their start and their end; {@link #close()} waits for them. */
    @GuardedBy("this")
    private int downloading;

    /** Deletes the directory when the JVM exits before {@link #close()}; null once closed. */
    @GuardedBy("this")
    private Thread shutdownHook;

    /**
     * @param closeWait how long {@link #close()} waits for downloads in flight to end before it
     *     deletes the directory; a download that ends later deletes its own copy
     */
    DownloadCache(
            File directory, Executor downloadExecutor, Duration idleTimeout, Duration closeWait) {
        this(
                directory,
                downloadExecutor,
                idleTimeout,
                closeWait,
                DfsChangelogOptions.DOWNLOAD_STALL_TIMEOUT.defaultValue());
    }

    /**
     * @param closeWait how long {@link #close()} waits for downloads in flight to end before it
     *     deletes the directory; a download that ends later deletes its own copy
     * @param stallTimeout how long a reader waits for a download while no download moves a byte
     */
    DownloadCache(
            File directory,
            Executor downloadExecutor,
            Duration idleTimeout,
            Duration closeWait,
            Duration stallTimeout) {
        this.stallTimeoutNanos = stallTimeout.toNanos();
        this.directory = directory;
        this.downloadExecutor = downloadExecutor;
        this.idleTimeoutNanos = idleTimeout.toNanos();
        this.closeWaitNanos = closeWait.toNanos();
        this.shutdownHook =
                ShutdownHookUtil.addShutdownHook(
                        () -> FileUtils.deleteDirectoryQuietly(directory),
                        "DSTL download cache " + directory.getName(),
                        LOG);
    }

    /** Whether the handle is worth caching: a file on a distributed file system. */
    static boolean isCacheable(StreamStateHandle handle) {
        if (!(handle instanceof FileStateHandle)) {
            return false;
        }
        try {
            return ((FileStateHandle) handle).getFilePath().getFileSystem().isDistributedFS();
        } catch (IOException e) {
            return false;
        }
    }

    /** For tests: whether the download of {@code handle} has ended with a local copy. */
    synchronized boolean hasCopy(FileStateHandle handle) {
        Entry entry = entries.get(key(handle));
        return entry != null && entry.file.isDone() && !entry.file.isCompletedExceptionally();
    }

    /** Deletes the copies not used for the idle timeout; the view runs it periodically. */
    void sweepIdle() {
        List<File> expired = new ArrayList<>();
        synchronized (this) {
            if (closed) {
                return;
            }
            collectExpired(expired);
        }
        if (!expired.isEmpty()) {
            LOG.info("Deleting {} DSTL copies not read for the idle timeout", expired.size());
        }
        expired.forEach(DownloadCache::deleteQuietly);
    }

    /** Starts downloading the file unless it is cached or being downloaded. */
    void prefetch(FileStateHandle handle) {
        List<File> expired = new ArrayList<>();
        synchronized (this) {
            if (closed) {
                return;
            }
            collectExpired(expired);
            entryFor(handle);
        }
        expired.forEach(DownloadCache::deleteQuietly);
    }

    /**
     * Waits for the local copy and pins it; call {@link #unpin} with the returned copy when done
     * reading.
     */
    File pin(FileStateHandle handle) throws IOException {
        Entry entry = take(handle);
        File local = awaitPinned(entry, handle);
        if (!local.isFile() || !hasExpectedLength(local, handle)) {
            // deleted or truncated behind our back: download it again
            LOG.warn(
                    "Local copy {} of DSTL file {} is missing or has the wrong size;"
                            + " downloading it again",
                    local,
                    handle.getFilePath());
            release(entry);
            evict(handle, local);
            return awaitPinned(take(handle), handle); // no second chance for a fresh copy
        }
        return local;
    }

    /** The entry of the file, downloading it if needed, with one more user. */
    private synchronized Entry take(FileStateHandle handle) throws IOException {
        if (closed) {
            throw new IOException("The DSTL download cache is closed");
        }
        Entry entry = entryFor(handle);
        entry.users++;
        return entry;
    }

    /**
     * Waits for the copy of a taken entry; on any failure the entry's user is released and the
     * failure names the file.
     */
    private File awaitPinned(Entry entry, FileStateHandle handle) throws IOException {
        try {
            return awaitDownload(entry, handle);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            release(entry);
            throw new IOException("Interrupted while downloading " + handle.getFilePath(), e);
        } catch (ExecutionException e) {
            release(entry);
            Throwable cause =
                    e.getCause() instanceof CompletionException
                            ? e.getCause().getCause()
                            : e.getCause();
            if (cause instanceof IOException) {
                throw (IOException) cause;
            }
            throw new IOException("Could not download DSTL file " + handle.getFilePath(), cause);
        } catch (IOException e) {
            release(entry);
            throw e;
        }
    }

    /**
     * The entry's copy, waiting while some download makes progress; once none did for the stall
     * timeout, abandons the entry's download and fails.
     */
    private File awaitDownload(Entry entry, FileStateHandle handle)
            throws InterruptedException, ExecutionException, IOException {
        while (true) {
            long left = lastProgressNanos + stallTimeoutNanos - System.nanoTime();
            if (left <= 0 && abandonIfRunning(entry, handle)) {
                throw new IOException(
                        "No byte of any DSTL download arrived for "
                                + stallTimeout()
                                + " while waiting for DSTL file '"
                                + handle.getFilePath()
                                + "': the file system may be unreachable or hanging; the"
                                + " download was abandoned (raise '"
                                + DfsChangelogOptions.DOWNLOAD_STALL_TIMEOUT.key()
                                + "' if the file system is only slow)");
            }
            try {
                return entry.file.get(Math.max(left, 1), TimeUnit.NANOSECONDS);
            } catch (TimeoutException stillRunning) {
                // check the progress again
            }
        }
    }

    /**
     * Abandons the download of {@code entry} unless it has finished: forgets the entry (the next
     * read downloads again), interrupts the download's thread and closes its stream on another
     * thread (a stream's close may wait for its blocked read: HDFS's does). The download fails or,
     * if it ends anyway, deletes its copy.
     */
    private boolean abandonIfRunning(Entry entry, FileStateHandle handle) {
        Closeable stream;
        synchronized (this) {
            if (entry.finished) {
                return false;
            }
            if (entry.abandoned) {
                return true;
            }
            entry.abandoned = true;
            entries.remove(key(handle), entry);
            if (entry.thread != null) {
                entry.thread.interrupt(); // cleared by the pool before its next task
            }
            stream = entry.stream;
        }
        LOG.warn(
                "Abandoning the download of DSTL file {}: no byte of any download arrived for {}",
                handle.getFilePath(),
                stallTimeout());
        if (stream != null) {
            ReadUtils.closeOnAnotherThread(stream);
        }
        return true;
    }

    private String stallTimeout() {
        return TimeUtils.formatWithHighestUnit(Duration.ofNanos(stallTimeoutNanos));
    }

    /**
     * Forgets the local copy {@code local} of the file (if it is still the cached one) and deletes
     * it; the next {@link #pin} downloads the file again. Readers that have it open keep reading.
     */
    void evict(FileStateHandle handle, File local) {
        boolean removed = false;
        synchronized (this) {
            Entry entry = entries.get(key(handle));
            if (entry != null
                    && entry.file.isDone()
                    && !entry.file.isCompletedExceptionally()
                    && entry.file.join().equals(local)) {
                entries.remove(key(handle));
                removed = true;
            }
        }
        if (removed) {
            LOG.info("Evicted local copy {} of DSTL file {}", local, handle.getFilePath());
            deleteQuietly(local);
        }
    }

    /**
     * Where the segments of the verified copy {@code local} of {@code handle} start, ascending;
     * null if {@code local} is not this cache's current copy of it.
     */
    synchronized long[] segmentStarts(FileStateHandle handle, File local) {
        Entry entry = entries.get(key(handle));
        if (entry == null
                || !entry.file.isDone()
                || entry.file.isCompletedExceptionally()
                || !local.equals(entry.file.join())) {
            return null;
        }
        return entry.segmentStarts;
    }

    private static boolean hasExpectedLength(File local, FileStateHandle handle) {
        long expected = handle.getStateSize();
        return expected <= 0 || local.length() == expected;
    }

    /**
     * Releases a pin that {@link #pin} returned as {@code local}. A pin is released on the copy it
     * was taken on: if that copy was evicted and the file downloaded again meanwhile, the new
     * copy's pins are not touched.
     */
    synchronized void unpin(FileStateHandle handle, File local) {
        Entry entry = entries.get(key(handle));
        if (entry != null
                && entry.file.isDone()
                && !entry.file.isCompletedExceptionally()
                && entry.file.join().equals(local)) {
            release(entry);
        }
    }

    /** Releases one pin of {@code entry} (whether or not it is still the cached one). */
    private synchronized void release(Entry entry) {
        entry.users--;
        entry.lastUsedNanos = System.nanoTime();
    }

    synchronized int size() {
        return entries.size();
    }

    @Override
    public void close() {
        Thread hook;
        synchronized (this) {
            closed = true;
            // readers waiting for a download that will not run (the view's close dropped the
            // queued ones) or that is still running fail now, not after the stall timeout; a
            // running download that ends later deletes its copy
            for (Entry e : entries.values()) {
                e.file.completeExceptionally(new IOException("The DSTL download cache is closed"));
            }
            entries.clear();
            hook = shutdownHook;
            shutdownHook = null;
            long deadline = System.nanoTime() + closeWaitNanos;
            long left = closeWaitNanos;
            while (downloading > 0 && left > 0) {
                try {
                    TimeUnit.NANOSECONDS.timedWait(this, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
                left = deadline - System.nanoTime();
            }
            if (downloading > 0) {
                LOG.warn(
                        "Closing the DSTL download cache {} while {} download(s) still run;"
                                + " each deletes its copy when it ends",
                        directory,
                        downloading);
            }
        }
        try {
            FileUtils.deleteDirectory(directory);
        } catch (IOException e) {
            LOG.warn("Could not delete the DSTL download cache {}", directory, e);
        }
        if (hook != null) {
            ShutdownHookUtil.removeShutdownHook(hook, "DSTL download cache", LOG);
        }
    }

    @GuardedBy("this")
    private Entry entryFor(FileStateHandle handle) {
        String key = key(handle);
        Entry entry = entries.get(key);
        if (entry == null) {
            entry = new Entry();
            Entry created = entry;
            lastProgressNanos = System.nanoTime(); // a new wait begins
            CompletableFuture<File> download;
            try {
                download =
                        CompletableFuture.supplyAsync(
                                () -> download(handle, created), downloadExecutor);
            } catch (RejectedExecutionException e) {
                // the view is closing (its executor stopped first): fail this read, keep nothing
                entry.file =
                        CompletableFuture.failedFuture(
                                new IOException(
                                        "The DSTL download cache is closed; not downloading "
                                                + handle.getFilePath(),
                                        e));
                return entry;
            }
            entries.put(key, entry);
            entry.file = download.whenComplete((file, failure) -> finish(key, created, file));
        }
        entry.lastUsedNanos = System.nanoTime();
        return entry;
    }

    /**
     * Ends an entry's download: a failed one is forgotten (the next read retries), an abandoned one
     * deletes its copy.
     */
    private void finish(String key, Entry entry, File copy) {
        boolean abandoned;
        synchronized (this) {
            entry.finished = true;
            abandoned = entry.abandoned;
            if (copy == null) {
                entries.remove(key, entry);
            } else {
                // idle from now: a prefetched copy nobody read yet must not count the download's
                // own time as idle (a long replay of an earlier handle would have it swept and
                // downloaded again)
                entry.lastUsedNanos = System.nanoTime();
            }
        }
        if (abandoned && copy != null) {
            LOG.info("Deleting the copy of an abandoned DSTL download that ended late: {}", copy);
            deleteQuietly(copy);
        }
    }

    @GuardedBy("this")
    private void collectExpired(List<File> expired) {
        long now = System.nanoTime();
        Iterator<Entry> it = entries.values().iterator();
        while (it.hasNext()) {
            Entry entry = it.next();
            if (entry.users == 0
                    && entry.file.isDone()
                    && !entry.file.isCompletedExceptionally()
                    && now - entry.lastUsedNanos > idleTimeoutNanos) {
                expired.add(entry.file.join());
                it.remove();
            }
        }
    }

    /**
     * Downloads and verifies one file. Registered in {@link #downloading} for its whole run, so
     * that {@link #close()} can wait for it; one that starts after or ends after {@code close()}
     * leaves nothing behind (not even the directory, which {@code close()} may already have
     * deleted).
     */
    private File download(FileStateHandle handle, Entry entry) {
        synchronized (this) {
            if (closed) {
                throw new CompletionException(new IOException("The DSTL download cache is closed"));
            }
            if (entry.abandoned) { // while queued: do not open the file on a hanging DFS
                throw new CompletionException(abandonedFailure(handle));
            }
            downloading++;
            entry.thread = Thread.currentThread();
        }
        lastProgressNanos = System.nanoTime();
        File target = new File(directory, "dstl-" + UUID.randomUUID());
        boolean closedMeanwhile;
        try {
            return downloadTo(target, handle, entry);
        } finally {
            lastProgressNanos = System.nanoTime();
            synchronized (this) {
                downloading--;
                entry.thread = null;
                closedMeanwhile = closed;
                notifyAll();
            }
            if (closedMeanwhile) {
                deleteQuietly(target);
                // only succeeds when empty: close() or another late download may be deleting too
                directory.delete();
            }
        }
    }

    private File downloadTo(File target, FileStateHandle handle, Entry entry) {
        String name = handle.getFilePath().toString();
        try {
            Files.createDirectories(directory.toPath());
            try (FSDataInputStream in = openRemote(handle);
                    OutputStream out = Files.newOutputStream(target.toPath())) {
                entry.stream = in;
                if (entry.abandoned) { // abandoned while it opened: the closer saw no stream
                    throw abandonedFailure(handle);
                }
                progress(in).transferTo(out);
            } finally {
                entry.stream = null;
            }
            long expected = handle.getStateSize();
            if (expected > 0 && target.length() != expected) {
                throw new IOException(
                        "DSTL file '"
                                + name
                                + "' is truncated or was overwritten: it has "
                                + target.length()
                                + " bytes, but its checkpoint recorded "
                                + expected);
            }
            try (InputStream in =
                    new BufferedInputStream(
                            progress(Files.newInputStream(target.toPath())), 64 * 1024)) {
                entry.segmentStarts = SegmentDecoder.verifyFile(in, name, target.length());
            }
            synchronized (this) {
                if (closed) {
                    throw new IOException("The DSTL download cache was closed");
                }
                if (entry.abandoned) {
                    throw abandonedFailure(handle);
                }
            }
            LOG.debug("Downloaded DSTL file {} to {}", name, target);
            return target;
        } catch (IOException e) {
            deleteQuietly(target);
            throw new CompletionException(e);
        } catch (RuntimeException e) {
            // a file system may fail unchecked: no partial copy may stay in the cache directory
            deleteQuietly(target);
            throw new CompletionException(
                    new IOException("Could not download DSTL file '" + name + "': " + e, e));
        }
    }

    private IOException abandonedFailure(FileStateHandle handle) {
        return new IOException(
                "The download of DSTL file '"
                        + handle.getFilePath()
                        + "' was abandoned: no byte of any download arrived for "
                        + stallTimeout()
                        + " ('"
                        + DfsChangelogOptions.DOWNLOAD_STALL_TIMEOUT.key()
                        + "')");
    }

    /**
     * {@code in}, each of whose reads counts as progress of the downloads: the download's own, and
     * reading its local copy to verify it (a large file takes a while).
     */
    private InputStream progress(InputStream in) {
        return new ProgressInputStream(in, () -> lastProgressNanos = System.nanoTime());
    }

    static FSDataInputStream openRemote(StreamStateHandle handle) throws IOException {
        try {
            return handle.openInputStream();
        } catch (FileNotFoundException e) {
            throw new FileNotFoundException(
                    "DSTL file '" + ReadUtils.nameOf(handle) + "' is missing: " + e.getMessage());
        }
    }

    private static String key(FileStateHandle handle) {
        return handle.getFilePath().toString();
    }

    private static void deleteQuietly(File file) {
        if (file != null && file.exists() && !file.delete()) {
            LOG.warn("Could not delete cached DSTL file {}", file);
        }
    }

    /** One file's download and copy. Fields without a volatile are guarded by the cache. */
    private static final class Entry {
        CompletableFuture<File> file;
        int users;
        long lastUsedNanos;

        /** The download's stream while it reads; closed to end a blocked read when abandoned. */
        volatile Closeable stream;

        /** The thread running the download, while it runs; guarded by the cache. */
        Thread thread;

        /** Given up by a reader after a stall; never set once {@link #finished}. */
        volatile boolean abandoned;

        /** The download ended (copy or failure); an abandoned one deletes its copy then. */
        boolean finished;

        /** Where the verified copy's segments start, ascending; set before {@link #file} ends. */
        volatile long[] segmentStarts;
    }
}
