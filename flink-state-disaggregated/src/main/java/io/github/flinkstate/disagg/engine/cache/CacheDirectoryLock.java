package io.github.flinkstate.disagg.engine.cache;

import java.io.File;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.StandardOpenOption;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.util.FileUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Marks a local cache directory as in use by a live {@link DiskCache}: an OS file lock on the file
 * {@value #LOCK_FILE} inside it, held until {@link #release}. A process that dies (a TaskManager
 * killed) loses its locks, so {@link #deleteAbandoned} can tell its leftover directories from those
 * of caches that still run, in this process or another one, and delete them instead of letting them
 * fill the disk crash after crash.
 *
 * <p>Thread safety: {@link #release} is idempotent and may be called from any thread. {@link
 * #acquire} (registration and locking) and a sweep's check and probe of one directory run under
 * {@link #HELD_HERE}'s monitor; a sweep deletes outside it, which is safe because cache directories
 * get fresh names and a young directory without a lock file is never swept.
 */
final class CacheDirectoryLock {

    private static final Logger LOG = LoggerFactory.getLogger(CacheDirectoryLock.class);

    static final String LOCK_FILE = ".in-use";

    /**
     * The directories caches of this process hold. A sweep never probes their lock files: on Linux
     * the JDK's file locks are POSIX record locks, and closing any channel of a file (the probe's)
     * drops all of the process's locks on it, so another process's sweep would then delete the
     * directory of a live cache.
     */
    private static final Set<String> HELD_HERE = ConcurrentHashMap.newKeySet();

    private final FileChannel channel;
    private final FileLock lock;
    private final String directory;

    private CacheDirectoryLock(FileChannel channel, FileLock lock, String directory) {
        this.channel = channel;
        this.lock = lock;
        this.directory = directory;
    }

    /** The key of {@code dir} in {@link #HELD_HERE}. */
    private static String keyOf(File dir) {
        return dir.getAbsoluteFile().toPath().normalize().toString();
    }

    /**
     * Locks {@code directory} (which must exist) for this cache. The directory counts as held here
     * before its lock file is created, so that a sweep of another cache of this process, running at
     * the same moment, never probes it (see {@link #HELD_HERE}).
     */
    static CacheDirectoryLock acquire(File directory) throws IOException {
        synchronized (HELD_HERE) { // a sweep here checks and probes under the same monitor
            return acquireHeld(directory);
        }
    }

    private static CacheDirectoryLock acquireHeld(File directory) throws IOException {
        String key = keyOf(directory);
        if (!HELD_HERE.add(key)) {
            throw new IOException(
                    "local cache directory " + directory + " is in use by this process");
        }
        FileChannel ch = null;
        try {
            ch =
                    FileChannel.open(
                            new File(directory, LOCK_FILE).toPath(),
                            StandardOpenOption.CREATE,
                            StandardOpenOption.WRITE);
            FileLock lock = ch.tryLock();
            if (lock == null) {
                throw new IOException("local cache directory " + directory + " is in use");
            }
            return new CacheDirectoryLock(ch, lock, key);
        } catch (IOException | RuntimeException e) {
            HELD_HERE.remove(key);
            if (ch != null) {
                ch.close();
            }
            throw e;
        }
    }

    void release() {
        HELD_HERE.remove(directory);
        try {
            if (lock.isValid()) {
                lock.release();
            }
            channel.close();
        } catch (IOException ignored) {
            // closing the channel releases the lock anyway
        }
    }

    /**
     * Deletes the subdirectories of {@code parent} that no live cache holds: those whose lock file
     * can be locked, and those without one that are older than {@code minAgeMillis} (a directory
     * being created right now has no lock file yet). Returns how many were deleted.
     */
    static int deleteAbandoned(File parent, long minAgeMillis) {
        File[] children = parent.listFiles(File::isDirectory);
        if (children == null) {
            return 0;
        }
        int deleted = 0;
        for (File dir : children) {
            if (isAbandoned(dir, minAgeMillis)) {
                try {
                    FileUtils.deleteDirectory(dir);
                    deleted++;
                    LOG.info("Deleted the abandoned local cache directory {}", dir);
                } catch (IOException e) {
                    LOG.warn(
                            "Could not delete abandoned local cache directory {}: {}",
                            dir,
                            e.toString());
                }
            }
        }
        return deleted;
    }

    private static boolean isAbandoned(File dir, long minAgeMillis) {
        synchronized (HELD_HERE) { // no cache of this process starts holding it meanwhile
            return isAbandonedHeld(dir, minAgeMillis);
        }
    }

    private static boolean isAbandonedHeld(File dir, long minAgeMillis) {
        if (HELD_HERE.contains(keyOf(dir))) {
            return false; // a cache of this process: never probed (see HELD_HERE)
        }
        File lockFile = new File(dir, LOCK_FILE);
        if (!lockFile.exists()) {
            return System.currentTimeMillis() - dir.lastModified() > minAgeMillis;
        }
        try (FileChannel ch = FileChannel.open(lockFile.toPath(), StandardOpenOption.WRITE)) {
            FileLock probe = ch.tryLock();
            if (probe == null) {
                return false; // held by another process
            }
            probe.release();
            return true;
        } catch (OverlappingFileLockException e) {
            return false; // held by a cache in this process
        } catch (IOException e) {
            return false; // cannot tell: leave it
        }
    }
}
