package io.github.flinkstate.benchmarks.scenario;

import java.io.IOException;
import java.net.URI;
import java.util.Collections;
import java.util.Iterator;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.BlockLocation;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystemFactory;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.local.LocalFileSystem;
import org.apache.flink.core.plugin.PluginManager;

/**
 * A Flink {@link FileSystem} for the {@code slowfs://} scheme that stores files on the local disk
 * and simulates a remote DFS upload: closing an output stream sleeps for a random latency, a
 * log-normal around a median (sigma 0.5) and, with a configurable probability, a long tail value
 * instead. Reads, listings and deletes are not delayed. It counts created files and written bytes
 * below a configurable directory (the DSTL base path of the current run).
 *
 * <p>Used by {@link ChangelogScenario}; install it once per JVM with {@link #install(long, long,
 * double)} before the MiniCluster starts (MiniCluster does not re-initialize file systems).
 *
 * <p>Thread safety: thread-safe; configuration and counters are static (singleton file system).
 */
public final class SlowFileSystem extends FileSystem {

    public static final String SCHEME = "slowfs";

    private static final SlowFileSystem INSTANCE = new SlowFileSystem();

    private static volatile double medianMs = 5;
    private static volatile long tailMs = 1000;
    private static volatile double tailFraction = 0.01;
    private static volatile String countedPrefix = "/nonexistent/";

    private static final AtomicLong CREATES = new AtomicLong();
    private static final AtomicLong COUNTED_CREATES = new AtomicLong();
    private static final AtomicLong COUNTED_BYTES = new AtomicLong();
    private static final AtomicLong TAIL_DELAYS = new AtomicLong();

    private final LocalFileSystem local = LocalFileSystem.getSharedInstance();

    private SlowFileSystem() {}

    /** Registers the scheme with Flink's FileSystem (through a one-factory PluginManager). */
    public static void install(long medianMillis, long tailMillis, double tailProbability) {
        medianMs = medianMillis;
        tailMs = tailMillis;
        tailFraction = tailProbability;
        FileSystem.initialize(
                new Configuration(),
                new PluginManager() {
                    @Override
                    @SuppressWarnings("unchecked")
                    public <P> Iterator<P> load(Class<P> service) {
                        if (service == FileSystemFactory.class) {
                            return Collections.singletonList((P) new Factory()).iterator();
                        }
                        return Collections.emptyIterator();
                    }
                });
    }

    /** A {@code slowfs://} URI string for a local directory. */
    public static String uri(java.io.File dir) {
        return SCHEME + "://" + dir.getAbsoluteFile().toURI().getPath();
    }

    /** Resets the counters; creates below the given local directory are counted separately. */
    public static void resetCounters(java.io.File countedDir) {
        countedPrefix =
                countedDir == null
                        ? "/nonexistent/"
                        : countedDir.getAbsoluteFile().toURI().getPath();
        CREATES.set(0);
        COUNTED_CREATES.set(0);
        COUNTED_BYTES.set(0);
        TAIL_DELAYS.set(0);
    }

    public static long creates() {
        return CREATES.get();
    }

    public static long countedCreates() {
        return COUNTED_CREATES.get();
    }

    public static long countedBytes() {
        return COUNTED_BYTES.get();
    }

    public static long tailDelays() {
        return TAIL_DELAYS.get();
    }

    private static long nextDelayMillis() {
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        if (rnd.nextDouble() < tailFraction) {
            TAIL_DELAYS.incrementAndGet();
            return tailMs;
        }
        return Math.round(medianMs * Math.exp(0.5 * rnd.nextGaussian()));
    }

    private static Path toLocal(Path path) {
        return new Path(path.toUri().getPath());
    }

    @Override
    public FSDataOutputStream create(Path f, WriteMode overwriteMode) throws IOException {
        CREATES.incrementAndGet();
        boolean counted = f.toUri().getPath().startsWith(countedPrefix);
        if (counted) {
            COUNTED_CREATES.incrementAndGet();
        }
        return new SlowOutputStream(local.create(toLocal(f), overwriteMode), counted);
    }

    @Override
    public FSDataInputStream open(Path f, int bufferSize) throws IOException {
        return local.open(toLocal(f), bufferSize);
    }

    @Override
    public FSDataInputStream open(Path f) throws IOException {
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

    /** Delays close (the "upload") and counts written bytes. */
    private static final class SlowOutputStream extends FSDataOutputStream {
        private final FSDataOutputStream out;
        private final boolean counted;
        private boolean closed;

        SlowOutputStream(FSDataOutputStream out, boolean counted) {
            this.out = out;
            this.counted = counted;
        }

        @Override
        public long getPos() throws IOException {
            return out.getPos();
        }

        @Override
        public void write(int b) throws IOException {
            out.write(b);
            if (counted) {
                COUNTED_BYTES.incrementAndGet();
            }
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
            if (counted) {
                COUNTED_BYTES.addAndGet(len);
            }
        }

        @Override
        public void flush() throws IOException {
            out.flush();
        }

        @Override
        public void sync() throws IOException {
            out.sync();
        }

        @Override
        public void close() throws IOException {
            if (closed) {
                return;
            }
            closed = true;
            try {
                Thread.sleep(nextDelayMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                out.close();
                throw new IOException("Interrupted while simulating the upload latency", e);
            }
            out.close();
        }
    }

    /** Factory handed to Flink's FileSystem through the PluginManager in {@link #install}. */
    public static final class Factory implements FileSystemFactory {
        @Override
        public String getScheme() {
            return SCHEME;
        }

        @Override
        public FileSystem create(URI fsUri) {
            return INSTANCE;
        }
    }
}
