package io.github.flinkstate.changelog.testutils;

import java.io.IOException;
import java.net.URI;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.core.fs.BlockLocation;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.local.LocalFileSystem;

/**
 * A real Flink {@link FileSystem} for the {@code faulty://} scheme that stores files on the local
 * disk and injects faults into {@link #create} calls: a queue of behaviours (block on a latch,
 * fail) is consumed one per created file. It claims to be distributed so that the reader's local
 * download cache is exercised.
 *
 * <p>Thread safety: thread-safe. State is static (the file system is a singleton); call {@link
 * #reset()} before each test.
 */
public final class FaultInjectingFileSystem extends FileSystem {

    public static final String SCHEME = "faulty";
    public static final FaultInjectingFileSystem INSTANCE = new FaultInjectingFileSystem();

    private static final Deque<Object> CREATE_BEHAVIOURS = new ArrayDeque<>();
    private static final AtomicInteger CREATES = new AtomicInteger();
    private static final AtomicInteger OPENS = new AtomicInteger();
    private static final Object FAIL = new Object();
    private static final java.util.Set<String> DELETED =
            java.util.concurrent.ConcurrentHashMap.newKeySet();

    private final LocalFileSystem local = LocalFileSystem.getSharedInstance();

    private FaultInjectingFileSystem() {}

    /** A path on this file system for a local absolute path. */
    public static Path path(java.io.File file) {
        return new Path(SCHEME + "://" + file.getAbsoluteFile().toURI().getPath());
    }

    public static synchronized void reset() {
        CREATE_BEHAVIOURS.clear();
        CREATES.set(0);
        OPENS.set(0);
        DELETED.clear();
    }

    /** Paths (as {@code toUri().getPath()}) deleted through this file system since the reset. */
    public static java.util.Set<String> deletedPaths() {
        return DELETED;
    }

    /** The next created file blocks until the latch opens, then is written normally. */
    public static synchronized void blockNextCreate(CountDownLatch latch) {
        CREATE_BEHAVIOURS.add(latch);
    }

    /** The next {@code n} creates fail with an IOException. */
    public static synchronized void failNextCreates(int n) {
        for (int i = 0; i < n; i++) {
            CREATE_BEHAVIOURS.add(FAIL);
        }
    }

    /** The next created file behaves normally (a placeholder in the queue). */
    public static synchronized void normalNextCreate() {
        CREATE_BEHAVIOURS.add(Boolean.TRUE);
    }

    public static int creates() {
        return CREATES.get();
    }

    public static int opens() {
        return OPENS.get();
    }

    private static synchronized Object nextBehaviour() {
        return CREATE_BEHAVIOURS.poll();
    }

    private static Path toLocal(Path path) {
        return new Path(path.toUri().getPath());
    }

    @Override
    public FSDataOutputStream create(Path f, WriteMode overwriteMode) throws IOException {
        CREATES.incrementAndGet();
        Object behaviour = nextBehaviour();
        if (behaviour == FAIL) {
            throw new IOException("Injected failure creating " + f);
        }
        if (behaviour instanceof CountDownLatch) {
            try {
                ((CountDownLatch) behaviour).await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("Interrupted", e);
            }
        }
        return local.create(toLocal(f), overwriteMode);
    }

    @Override
    public FSDataInputStream open(Path f, int bufferSize) throws IOException {
        return open(f);
    }

    @Override
    public FSDataInputStream open(Path f) throws IOException {
        OPENS.incrementAndGet();
        return local.open(toLocal(f));
    }

    @Override
    public Path getWorkingDirectory() {
        return local.getWorkingDirectory();
    }

    @Override
    public Path getHomeDirectory() {
        return local.getHomeDirectory();
    }

    @Override
    public URI getUri() {
        return URI.create(SCHEME + ":///");
    }

    @Override
    public FileStatus getFileStatus(Path f) throws IOException {
        return local.getFileStatus(toLocal(f));
    }

    @Override
    public BlockLocation[] getFileBlockLocations(FileStatus file, long start, long len)
            throws IOException {
        return local.getFileBlockLocations(file, start, len);
    }

    @Override
    public FileStatus[] listStatus(Path f) throws IOException {
        return local.listStatus(toLocal(f));
    }

    @Override
    public boolean delete(Path f, boolean recursive) throws IOException {
        DELETED.add(f.toUri().getPath());
        return local.delete(toLocal(f), recursive);
    }

    @Override
    public boolean mkdirs(Path f) throws IOException {
        return local.mkdirs(toLocal(f));
    }

    @Override
    public boolean rename(Path src, Path dst) throws IOException {
        return local.rename(toLocal(src), toLocal(dst));
    }

    @Override
    public boolean isDistributedFS() {
        return true;
    }
}
