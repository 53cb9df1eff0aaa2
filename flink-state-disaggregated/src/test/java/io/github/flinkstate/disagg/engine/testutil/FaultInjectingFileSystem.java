package io.github.flinkstate.disagg.engine.testutil;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.core.fs.BlockLocation;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

/**
 * A real Flink {@link FileSystem} that delegates to another one (usually the local file system) and
 * injects faults by path: failing writes, flipped bytes on read, files reported shorter than they
 * are (truncation) and hidden files (missing).
 *
 * <p>Thread safety: thread-safe; fault switches are concurrent collections.
 */
public final class FaultInjectingFileSystem extends FileSystem {

    private final FileSystem delegate;

    /** Number of upcoming file creations whose streams fail after a few bytes. */
    private final AtomicInteger failingCreates = new AtomicInteger();

    private final Map<String, Long> corruptAt = new ConcurrentHashMap<>();
    private final Map<String, Long> truncatedTo = new ConcurrentHashMap<>();
    private final Set<String> hidden = ConcurrentHashMap.newKeySet();
    private final AtomicInteger opens = new AtomicInteger();

    public FaultInjectingFileSystem(FileSystem delegate) {
        this.delegate = delegate;
    }

    /** The next {@code n} created files fail with an IOException after 100 bytes. */
    public void failNextCreates(int n) {
        failingCreates.set(n);
    }

    /** Reads of {@code path} see byte {@code offset} flipped. */
    public void corrupt(String path, long offset) {
        corruptAt.put(key(path), offset);
    }

    /** {@code path} appears to end after {@code length} bytes. */
    public void truncate(String path, long length) {
        truncatedTo.put(key(path), length);
    }

    /** {@code path} appears not to exist. */
    public void hide(String path) {
        hidden.add(key(path));
    }

    public void heal() {
        failingCreates.set(0);
        corruptAt.clear();
        truncatedTo.clear();
        hidden.clear();
    }

    public int opens() {
        return opens.get();
    }

    private static String key(String p) {
        return new Path(p).toUri().getPath();
    }

    private static String key(Path p) {
        return p.toUri().getPath();
    }

    private void checkVisible(Path f) throws FileNotFoundException {
        if (hidden.contains(key(f))) {
            throw new FileNotFoundException("injected: file " + f + " does not exist");
        }
    }

    @Override
    public Path getWorkingDirectory() {
        return delegate.getWorkingDirectory();
    }

    @Override
    public Path getHomeDirectory() {
        return delegate.getHomeDirectory();
    }

    @Override
    public URI getUri() {
        return delegate.getUri();
    }

    @Override
    public FileStatus getFileStatus(Path f) throws IOException {
        checkVisible(f);
        FileStatus s = delegate.getFileStatus(f);
        Long t = truncatedTo.get(key(f));
        if (t == null) {
            return s;
        }
        return new FileStatus() {
            @Override
            public long getLen() {
                return Math.min(t, s.getLen());
            }

            @Override
            public long getBlockSize() {
                return s.getBlockSize();
            }

            @Override
            public short getReplication() {
                return s.getReplication();
            }

            @Override
            public long getModificationTime() {
                return s.getModificationTime();
            }

            @Override
            public long getAccessTime() {
                return s.getAccessTime();
            }

            @Override
            public boolean isDir() {
                return s.isDir();
            }

            @Override
            public Path getPath() {
                return s.getPath();
            }
        };
    }

    @Override
    public BlockLocation[] getFileBlockLocations(FileStatus file, long start, long len)
            throws IOException {
        return delegate.getFileBlockLocations(file, start, len);
    }

    @Override
    public FSDataInputStream open(Path f, int bufferSize) throws IOException {
        return open(f);
    }

    @Override
    public FSDataInputStream open(Path f) throws IOException {
        checkVisible(f);
        opens.incrementAndGet();
        FSDataInputStream in = delegate.open(f);
        String k = key(f);
        return new FSDataInputStream() {
            @Override
            public void seek(long desired) throws IOException {
                in.seek(desired);
            }

            @Override
            public long getPos() throws IOException {
                return in.getPos();
            }

            @Override
            public int read() throws IOException {
                byte[] one = new byte[1];
                int n = read(one, 0, 1);
                return n <= 0 ? -1 : one[0] & 0xFF;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                long pos = in.getPos();
                Long t = truncatedTo.get(k);
                if (t != null) {
                    if (pos >= t) {
                        return -1;
                    }
                    len = (int) Math.min(len, t - pos);
                }
                int n = in.read(b, off, len);
                Long c = corruptAt.get(k);
                if (n > 0 && c != null && c >= pos && c < pos + n) {
                    b[off + (int) (c - pos)] ^= 0x5A;
                }
                return n;
            }

            @Override
            public void close() throws IOException {
                in.close();
            }
        };
    }

    @Override
    public FileStatus[] listStatus(Path f) throws IOException {
        return delegate.listStatus(f);
    }

    @Override
    public boolean delete(Path f, boolean recursive) throws IOException {
        return delegate.delete(f, recursive);
    }

    @Override
    public boolean mkdirs(Path f) throws IOException {
        return delegate.mkdirs(f);
    }

    @Override
    public FSDataOutputStream create(Path f, WriteMode overwriteMode) throws IOException {
        FSDataOutputStream out = delegate.create(f, overwriteMode);
        boolean fail = failingCreates.getAndUpdate(n -> Math.max(0, n - 1)) > 0;
        if (!fail) {
            return out;
        }
        return new FSDataOutputStream() {
            private long written;

            @Override
            public long getPos() throws IOException {
                return out.getPos();
            }

            @Override
            public void write(int b) throws IOException {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                if (written + len > 100) {
                    throw new IOException("injected write failure on " + f);
                }
                written += len;
                out.write(b, off, len);
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
                out.close();
            }
        };
    }

    @Override
    public boolean rename(Path src, Path dst) throws IOException {
        return delegate.rename(src, dst);
    }

    @Override
    public boolean isDistributedFS() {
        return delegate.isDistributedFS();
    }
}
