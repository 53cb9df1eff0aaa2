package io.github.flinkstate.testing.fs;

import java.io.File;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import org.apache.flink.core.fs.BlockLocation;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.local.LocalFileSystem;

/**
 * A Flink {@link FileSystem} that delegates to another one and injects, per {@link FsOp}: latency
 * (fixed or a distribution with a tail), a bandwidth cap, failures (the n-th create, the next n
 * creates, every create of a path matching a pattern, a stream that fails after some bytes), hangs
 * until released, and on the read side truncation, flipped bytes and hidden files. It counts calls
 * and bytes per operation kind and per path ({@link #counters()}).
 *
 * <p>Two ways to install it:
 *
 * <ul>
 *   <li>Wrap an instance and hand it to code that takes a {@code FileSystem}: {@code new
 *       InjectingFileSystem(FileSystem.getLocalFileSystem())} (paths pass through unchanged, also
 *       {@code hdfs://} ones when wrapping a Hadoop file system).
 *   <li>Through a URI scheme, for code that resolves paths itself (Flink jobs, checkpoint storage,
 *       DSTLs): {@link #shared()} is the JVM-wide instance of the {@code inject://} scheme, over
 *       the local disk; its factory is registered through {@code META-INF/services}, so {@code
 *       inject:///tmp/dir} works as soon as this jar is on the classpath. {@link #install(String)}
 *       registers another scheme the same way at runtime (call it before a MiniCluster starts).
 *       {@link #path(File)} and {@link #uri(File)} give the scheme's name for a local file.
 * </ul>
 *
 * <p>Behaviours compose: a create can be delayed, then blocked by a hang, then fail. Order per
 * call: count, hang, latency, injected failure, delegate. {@link #heal()} removes faults and
 * releases hangs; {@link #reset()} also clears latencies, the bandwidth cap and the counters, and
 * offers positional reads again.
 *
 * <p>Thread safety: thread-safe; configuration may change while calls run (each call sees the
 * configuration at its start). Hangs give up after {@link #hangLimit(Duration)} (60 s by default)
 * so that a test that forgets to release never hangs the build.
 */
public final class InjectingFileSystem extends FileSystem {

    /** The scheme of {@link #shared()}, registered through {@code META-INF/services}. */
    public static final String SCHEME = "inject";

    private static final Map<String, InjectingFileSystem> SCHEMES = new ConcurrentHashMap<>();

    private final FileSystem delegate;
    private final String scheme;
    private final AtomicInteger openInputStreams = new AtomicInteger();
    private final FsCounters counters = new FsCounters();

    private final Map<FsOp, Latency> latencies = new ConcurrentHashMap<>();
    private volatile BandwidthLimiter bandwidth;
    private volatile Random random = new Random(42);
    private volatile Duration hangLimit = Duration.ofSeconds(60);
    private volatile Boolean distributed;
    private volatile boolean positionalReads = true;

    private final AtomicLong createSeq = new AtomicLong();
    private final AtomicInteger failNextCreates = new AtomicInteger();
    private final Set<Long> failCreateSeqs = ConcurrentHashMap.newKeySet();
    private final List<Pattern> failCreatePatterns = new CopyOnWriteArrayList<>();
    private final AtomicInteger failNextStreams = new AtomicInteger();
    private volatile long failStreamsAfterBytes;
    private final List<Hang> hangs = new CopyOnWriteArrayList<>();

    private final Map<String, Long> truncatedTo = new ConcurrentHashMap<>();
    private final Map<String, Set<Long>> flippedBytes = new ConcurrentHashMap<>();
    private final Set<String> hidden = ConcurrentHashMap.newKeySet();

    /** Wraps {@code delegate}; paths pass through unchanged. */
    public InjectingFileSystem(FileSystem delegate) {
        this(delegate, null);
    }

    private InjectingFileSystem(FileSystem delegate, String scheme) {
        this.delegate = delegate;
        this.scheme = scheme;
    }

    /** The JVM-wide instance behind {@code inject://} paths (the local disk). */
    public static InjectingFileSystem shared() {
        return forScheme(SCHEME);
    }

    /**
     * Registers {@code scheme} with Flink's {@link FileSystem} (keeping the factories found by the
     * service loader and earlier installs) and returns its JVM-wide instance over the local disk.
     * Call it before a MiniCluster starts; calling it again for the same scheme returns the same
     * instance.
     */
    public static InjectingFileSystem install(String scheme) {
        InjectingFileSystem fs = forScheme(scheme);
        SchemeRegistration.register(SCHEMES.keySet());
        return fs;
    }

    static InjectingFileSystem forScheme(String scheme) {
        return SCHEMES.computeIfAbsent(
                scheme, s -> new InjectingFileSystem(LocalFileSystem.getSharedInstance(), s));
    }

    // ------------------------------------------------------------------ naming

    /** This file system's path for a local file ({@code scheme:///abs/path}); scheme mode only. */
    public Path path(File file) {
        requireScheme();
        return new Path(uri(file));
    }

    /** {@link #path(File)} as a string, e.g. for {@code execution.checkpointing.dir}. */
    public String uri(File file) {
        requireScheme();
        return scheme + "://" + file.getAbsoluteFile().toURI().getPath();
    }

    /** The path part of {@code file}'s URI, as used by the per-path counters. */
    public static String key(File file) {
        return file.getAbsoluteFile().toURI().getPath();
    }

    /** The path part of {@code path}'s URI, as used by the per-path counters. */
    public static String key(Path path) {
        return path.toUri().getPath();
    }

    private static String key(String path) {
        return key(new Path(path));
    }

    private void requireScheme() {
        if (scheme == null) {
            throw new IllegalStateException(
                    "a wrapping InjectingFileSystem has no scheme; use its delegate's paths");
        }
    }

    // ------------------------------------------------------------------ configuration

    /** Seeds the random source of the latency distributions. */
    public InjectingFileSystem seed(long seed) {
        random = new Random(seed);
        return this;
    }

    /** Every call of {@code op} waits a sample of {@code latency} before it runs. */
    public InjectingFileSystem latency(FsOp op, Latency latency) {
        latencies.put(op, latency);
        return this;
    }

    /** The latency configured for {@code op}, or {@link Latency#none()}. */
    public Latency latency(FsOp op) {
        return latencies.getOrDefault(op, Latency.none());
    }

    /** Reads and writes together move at most {@code bytesPerSecond}; {@code <= 0} removes it. */
    public InjectingFileSystem bandwidth(long bytesPerSecond) {
        bandwidth = bytesPerSecond <= 0 ? null : new BandwidthLimiter(bytesPerSecond);
        return this;
    }

    /**
     * Whether the streams of {@link #open} offer the positional read of {@link
     * org.apache.flink.core.fs.ByteBufferReadable} (default true, as Flink's local and Hadoop
     * streams do); false makes them plain seek-and-read streams, like those of a file system
     * without positional reads. Applies to streams opened afterwards.
     */
    public InjectingFileSystem positionalReads(boolean offered) {
        positionalReads = offered;
        return this;
    }

    /** How long a hang blocks at most before failing the call (default 60 s). */
    public InjectingFileSystem hangLimit(Duration limit) {
        hangLimit = limit;
        return this;
    }

    /**
     * What {@link #isDistributedFS()} reports; by default true in scheme mode, else the delegate's.
     */
    public InjectingFileSystem distributed(boolean isDistributed) {
        distributed = isDistributed;
        return this;
    }

    /** The next {@code n} creates fail with an IOException. */
    public void failNextCreates(int n) {
        failNextCreates.set(n);
    }

    /** The {@code nth} create from now (1 = the next one) fails with an IOException, once. */
    public void failNthCreate(int nth) {
        if (nth < 1) {
            throw new IllegalArgumentException("nth counts from 1: " + nth);
        }
        failCreateSeqs.add(createSeq.get() + nth);
    }

    /** Every create of a path (URI path) matching {@code regex} fails, until {@link #heal()}. */
    public void failCreatesMatching(String regex) {
        failCreatePatterns.add(Pattern.compile(regex));
    }

    /**
     * The streams of the next {@code n} creates fail with an IOException at the write that would
     * take them past {@code afterBytes} bytes (the create itself succeeds: a partial upload).
     */
    public void failNextWrites(int n, long afterBytes) {
        failStreamsAfterBytes = afterBytes;
        failNextStreams.set(n);
    }

    /**
     * Calls of {@code op} on paths matching {@code regex} block until the returned hang is released
     * (or {@link #heal()}), at most {@link #hangLimit(Duration)}.
     */
    public Hang hang(FsOp op, String regex) {
        Hang h = new Hang(op, Pattern.compile(regex), hangLimit, Integer.MAX_VALUE);
        hangs.add(h);
        return h;
    }

    /**
     * Only the next call of {@code op} on a path matching {@code regex} blocks until the returned
     * hang is released; later calls pass.
     */
    public Hang hangNext(FsOp op, String regex) {
        Hang h = new Hang(op, Pattern.compile(regex), hangLimit, 1);
        hangs.add(h);
        return h;
    }

    /** Reads of {@code path} end after {@code length} bytes and its status reports that length. */
    public void truncate(Path path, long length) {
        truncatedTo.put(key(path), length);
    }

    /** {@link #truncate(Path, long)} for a path string. */
    public void truncate(String path, long length) {
        truncatedTo.put(key(path), length);
    }

    /** Reads of {@code path} see the byte at {@code offset} flipped (XOR 0x5A). */
    public void flipByte(Path path, long offset) {
        flippedBytes.computeIfAbsent(key(path), k -> ConcurrentHashMap.newKeySet()).add(offset);
    }

    /** {@link #flipByte(Path, long)} for a path string. */
    public void flipByte(String path, long offset) {
        flipByte(new Path(path), offset);
    }

    /** {@code path} appears not to exist: open and status fail, listings omit it. */
    public void hide(Path path) {
        hidden.add(key(path));
    }

    /** {@link #hide(Path)} for a path string. */
    public void hide(String path) {
        hidden.add(key(path));
    }

    /** Removes every injected failure, hang, truncation, flip and hidden file; releases hangs. */
    public void heal() {
        failNextCreates.set(0);
        failCreateSeqs.clear();
        failCreatePatterns.clear();
        failNextStreams.set(0);
        for (Hang h : hangs) {
            h.release();
        }
        hangs.clear();
        truncatedTo.clear();
        flippedBytes.clear();
        hidden.clear();
    }

    /** {@link #heal()}, and clears latencies, the bandwidth cap, the counters; reseeds with 42. */
    public void reset() {
        heal();
        latencies.clear();
        bandwidth = null;
        distributed = null;
        positionalReads = true;
        hangLimit = Duration.ofSeconds(60);
        random = new Random(42);
        counters.reset();
    }

    /** Input streams opened through this file system and not closed yet (never reset). */
    public int openInputStreams() {
        return openInputStreams.get();
    }

    /** Calls and bytes per operation kind and per path. */
    public FsCounters counters() {
        return counters;
    }

    /** The wrapped file system. */
    public FileSystem delegate() {
        return delegate;
    }

    // ------------------------------------------------------------------ injection points

    /** Counts the call, then applies hangs and latency of {@code op}. */
    void before(FsOp op, String path) throws IOException {
        before(op, path, true);
    }

    /**
     * Counts the call, then applies hangs of {@code op} and, if {@code roundTrip}, its latency (a
     * read that continues where the stream's previous read ended is no round trip).
     */
    void before(FsOp op, String path, boolean roundTrip) throws IOException {
        counters.call(op, path);
        for (Hang h : hangs) {
            if (h.applies(op, path)) {
                h.block(path);
            }
        }
        Latency l = roundTrip ? latencies.get(op) : null;
        if (l != null) {
            long nanos;
            Random r = random;
            synchronized (r) {
                nanos = l.sampleNanos(r);
            }
            BandwidthLimiter.Sleeps.sleepNanos(nanos);
        }
    }

    void transferred(FsOp op, String path, long bytes) throws IOException {
        counters.bytes(op, path, bytes);
        BandwidthLimiter b = bandwidth;
        if (b != null) {
            b.acquire(bytes);
        }
    }

    long truncation(String path) {
        Long t = truncatedTo.get(path);
        return t == null ? -1 : t;
    }

    Set<Long> flips(String path) {
        return flippedBytes.get(path);
    }

    private void checkVisible(Path f) throws FileNotFoundException {
        if (hidden.contains(key(f))) {
            throw new FileNotFoundException("injected: file " + f + " does not exist");
        }
    }

    private void checkCreate(Path f, String k) throws IOException {
        long seq = createSeq.incrementAndGet();
        if (failCreateSeqs.remove(seq)) {
            throw new IOException("injected failure of create #" + seq + " (" + f + ")");
        }
        if (failNextCreates.getAndUpdate(n -> n > 0 ? n - 1 : 0) > 0) {
            throw new IOException("injected failure creating " + f);
        }
        for (Pattern p : failCreatePatterns) {
            if (p.matcher(k).matches()) {
                throw new IOException(
                        "injected failure creating " + f + " (matches " + p.pattern() + ")");
            }
        }
    }

    private Path toDelegate(Path p) {
        return scheme == null ? p : new Path(p.toUri().getPath());
    }

    Path fromDelegate(Path p) {
        return scheme == null || p == null ? p : new Path(scheme + "://" + p.toUri().getPath());
    }

    private FileStatus wrap(FileStatus s) {
        long t = truncation(key(s.getPath()));
        if (scheme == null && t < 0) {
            return s;
        }
        return new InjectedFileStatus(s, fromDelegate(s.getPath()), t);
    }

    // ------------------------------------------------------------------ FileSystem

    @Override
    public Path getWorkingDirectory() {
        return fromDelegate(delegate.getWorkingDirectory());
    }

    @Override
    public Path getHomeDirectory() {
        return fromDelegate(delegate.getHomeDirectory());
    }

    @Override
    public URI getUri() {
        return scheme == null ? delegate.getUri() : URI.create(scheme + ":///");
    }

    @Override
    public FileStatus getFileStatus(Path f) throws IOException {
        before(FsOp.STATUS, key(f));
        checkVisible(f);
        return wrap(delegate.getFileStatus(toDelegate(f)));
    }

    @Override
    public BlockLocation[] getFileBlockLocations(FileStatus file, long start, long len)
            throws IOException {
        FileStatus s = file instanceof InjectedFileStatus ? ((InjectedFileStatus) file).raw : file;
        return delegate.getFileBlockLocations(s, start, len);
    }

    @Override
    public FSDataInputStream open(Path f, int bufferSize) throws IOException {
        return open(f);
    }

    @Override
    public FSDataInputStream open(Path f) throws IOException {
        String k = key(f);
        before(FsOp.OPEN, k);
        checkVisible(f);
        FSDataInputStream in = delegate.open(toDelegate(f));
        openInputStreams.incrementAndGet();
        InjectingInputStream stream = new InjectingInputStream(in, k, this);
        return positionalReads ? stream : new SequentialInputStream(stream);
    }

    /** Called once by a stream of {@link #open} when it is closed. */
    void inputStreamClosed() {
        openInputStreams.decrementAndGet();
    }

    @Override
    public FileStatus[] listStatus(Path f) throws IOException {
        before(FsOp.LIST, key(f));
        checkVisible(f);
        FileStatus[] raw = delegate.listStatus(toDelegate(f));
        if (raw == null) {
            return null;
        }
        List<FileStatus> out = new ArrayList<>(raw.length);
        for (FileStatus s : raw) {
            if (!hidden.contains(key(s.getPath()))) {
                out.add(wrap(s));
            }
        }
        return out.toArray(new FileStatus[0]);
    }

    @Override
    public boolean delete(Path f, boolean recursive) throws IOException {
        before(FsOp.DELETE, key(f));
        return delegate.delete(toDelegate(f), recursive);
    }

    @Override
    public boolean mkdirs(Path f) throws IOException {
        before(FsOp.MKDIRS, key(f));
        return delegate.mkdirs(toDelegate(f));
    }

    @Override
    public FSDataOutputStream create(Path f, WriteMode overwriteMode) throws IOException {
        String k = key(f);
        before(FsOp.CREATE, k);
        checkCreate(f, k);
        FSDataOutputStream out = delegate.create(toDelegate(f), overwriteMode);
        long failAfter =
                failNextStreams.getAndUpdate(n -> n > 0 ? n - 1 : 0) > 0
                        ? failStreamsAfterBytes
                        : -1;
        return new InjectingOutputStream(out, k, this, failAfter);
    }

    @Override
    public boolean rename(Path src, Path dst) throws IOException {
        before(FsOp.RENAME, key(src));
        return delegate.rename(toDelegate(src), toDelegate(dst));
    }

    @Override
    public boolean isDistributedFS() {
        Boolean d = distributed;
        if (d != null) {
            return d;
        }
        return scheme != null || delegate.isDistributedFS();
    }

    @Override
    public String toString() {
        return "InjectingFileSystem["
                + (scheme == null ? "wrapping " + delegate.getUri() : scheme + "://")
                + ", latencies="
                + new TreeMap<>(latencies)
                + "]";
    }
}
