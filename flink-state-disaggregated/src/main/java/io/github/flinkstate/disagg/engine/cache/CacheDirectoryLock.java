package io.github.flinkstate.disagg.engine.cache;

import java.io.File;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.StandardOpenOption;
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
 * <p>Thread safety: {@link #release} is idempotent and may be called from any thread.
 */
final class CacheDirectoryLock {

    private static final Logger LOG = LoggerFactory.getLogger(CacheDirectoryLock.class);

    static final String LOCK_FILE = ".in-use";

    private final FileChannel channel;
    private final FileLock lock;

    private CacheDirectoryLock(FileChannel channel, FileLock lock) {
        this.channel = channel;
        this.lock = lock;
    }

    /** Locks {@code directory} (which must exist) for this cache. */
    static CacheDirectoryLock acquire(File directory) throws IOException {
        FileChannel ch =
                FileChannel.open(
                        new File(directory, LOCK_FILE).toPath(),
                        StandardOpenOption.CREATE,
                        StandardOpenOption.WRITE);
        try {
            FileLock lock = ch.tryLock();
            if (lock == null) {
                throw new IOException("local cache directory " + directory + " is in use");
            }
            return new CacheDirectoryLock(ch, lock);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    void release() {
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
