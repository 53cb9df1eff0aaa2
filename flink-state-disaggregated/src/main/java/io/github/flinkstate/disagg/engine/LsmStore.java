package io.github.flinkstate.disagg.engine;

import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.disagg.engine.cache.CacheHint;
import io.github.flinkstate.disagg.engine.cache.DiskCache;
import io.github.flinkstate.disagg.engine.cache.RowCache;
import io.github.flinkstate.disagg.engine.compaction.BelowOutputLevel;
import io.github.flinkstate.disagg.engine.compaction.Compaction;
import io.github.flinkstate.disagg.engine.compaction.CompactionFilter;
import io.github.flinkstate.disagg.engine.compaction.CompactionJob;
import io.github.flinkstate.disagg.engine.compaction.LeveledCompactionPicker;
import io.github.flinkstate.disagg.engine.compaction.SstOutputs;
import io.github.flinkstate.disagg.engine.fs.FileNames;
import io.github.flinkstate.disagg.engine.iterator.LsmIterator;
import io.github.flinkstate.disagg.engine.key.EntryType;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.key.KeyRange;
import io.github.flinkstate.disagg.engine.memtable.Memtable;
import io.github.flinkstate.disagg.engine.memtable.WriteBufferBudget;
import io.github.flinkstate.disagg.engine.sst.BloomFilter;
import io.github.flinkstate.disagg.engine.sst.IoRateLimiter;
import io.github.flinkstate.disagg.engine.sst.ReadCounters;
import io.github.flinkstate.disagg.engine.sst.ReaderCache;
import io.github.flinkstate.disagg.engine.version.FileMeta;
import io.github.flinkstate.disagg.engine.version.ManifestCodec;
import io.github.flinkstate.disagg.engine.version.RestorePlan;
import io.github.flinkstate.disagg.engine.version.Version;
import io.github.flinkstate.disagg.engine.version.VersionEdit;
import io.github.flinkstate.disagg.engine.version.VersionSet;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A pure-Java LSM key/value store whose primary copy lives on a Flink {@link FileSystem}; memory is
 * a cache. There is no write-ahead log: a {@link #snapshot()} is the durability point.
 *
 * <pre>
 *  put/delete/deletePrefix ──► active memtable ──freeze──► immutable memtables
 *                                                              │ flush thread
 *  get/scan ──► memtables ─► L0 files ─► L1 … Ln               ▼
 *                 (merge, newest seq wins,        SST files on FileSystem (primary dir)
 *                  tombstones applied)                        ▲ compaction thread
 *                                                  version set (ref-counted versions)
 * </pre>
 *
 * <p>A get that no memtable answers asks the store's {@link RowCache} before the files.
 *
 * <p>Keys start with their key group (2 bytes big-endian, see {@link KeyGroupSpan}); writes outside
 * the store's span are rejected. Values returned are shared arrays: do not modify.
 *
 * <p>Thread safety: thread-safe. Writes are serialised; reads run concurrently with writes, flushes
 * and compactions. Iterators see the files of the version they were opened on and are weakly
 * consistent with respect to memtable writes made after they were opened.
 *
 * <p>Threads: one flush thread, one compaction thread (per store), plus callers. Lock order: {@code
 * writeMutex} → {@code versions} → the row cache → the block memory; the flush lock and compaction
 * lock are never taken while holding {@code versions}.
 *
 * <p>Invariants (checked by {@link #checkInvariants()}):
 *
 * <ol>
 *   <li>{@code memtables.get(0)} is the only unfrozen memtable; the list is ordered newest first
 *       and memtable sequence ranges do not interleave.
 *   <li>A frozen memtable leaves the list only in the same atomic step that installs the file
 *       holding its data (so a reader sees the data in one place or both, never in neither).
 *   <li>The version set invariants hold (see {@link VersionSet}).
 * </ol>
 */
public final class LsmStore implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(LsmStore.class);
    private static final AtomicInteger IDS = new AtomicInteger();

    private final LsmOptions options;
    private final KeyGroupSpan span;
    private final FileSystem fs;
    private final BlockCache blockCache;
    private final ReaderCache readers;

    /** Null, or the pacing of compaction I/O ({@link LsmOptions#compactionBytesPerSecond}). */
    private final IoRateLimiter compactionLimiter;

    private final boolean ownsCompactionLimiter;

    private final SstOutputs outputs;
    private final VersionSet versions;
    private final LeveledCompactionPicker picker;
    private final ReadPath reads;

    /** Point-lookup results from the files, or null when the block memory has no share for rows. */
    private final RowCache rows;

    private final LsmStats stats = new LsmStats();
    private final Object writeMutex = new Object();
    private final ReentrantLock flushLock = new ReentrantLock();
    private final ReentrantLock compactionLock = new ReentrantLock();

    /** Idle seconds after which a background thread of the store ends (see {@link #idleEnding}). */
    static final long IDLE_THREAD_SECONDS = 10;

    /**
     * How long {@link #close()} waits for a running flush and compaction together. Both stop at
     * their next entry once the store is closed, so only one stuck on the file system takes longer;
     * its result is dropped when it ends.
     */
    static final int CLOSE_WAIT_SECONDS = 10;

    /**
     * Deletes of files that become obsolete after {@link #close()} (a snapshot released late), for
     * all stores of this JVM: one daemon thread, ending when idle.
     */
    private static final ThreadPoolExecutor LATE_DELETES = idleEnding("disagg-late-deletes");

    private final ExecutorService flushExecutor;
    private final ExecutorService compactionExecutor;

    /**
     * Deletes the primary's copies of obsolete files ({@link #onObsolete}): one daemon thread of
     * this store's ({@link #idleEnding}). A storage that hangs on deletes holds up no flush,
     * compaction or read, and no other store's deletes.
     */
    private final ThreadPoolExecutor deleter;

    /**
     * {@link #onObsolete} as the callback of an installed edit and of a reader's release (one
     * object, not one per get).
     */
    private final Consumer<List<FileMeta>> afterRead = this::onObsolete;

    private final AtomicBoolean flushScheduled = new AtomicBoolean();
    private final AtomicBoolean compactionScheduled = new AtomicBoolean();

    /** A compaction pass was asked for since the running pass last looked for work. */
    private final AtomicBoolean compactionRequested = new AtomicBoolean();

    private final AtomicLong lastSeq;

    /**
     * The last sequence number of the restored data (0 for a new store): a level-0 file whose
     * entries are all newer was flushed by this store; an older one holds restored data, also when
     * it is this store's copy of a restored file ({@link #rehomeAll}).
     */
    private final long restoredSeq;

    private final AtomicLong memtableIds = new AtomicLong();

    /**
     * Null, or the memtable budget shared with other stores ({@link LsmOptions#writeBufferBudget}).
     */
    private final WriteBufferBudget writeBudget;

    /** Bytes this store has charged to {@link #writeBudget} and not given back. */
    private final AtomicLong chargedBytes = new AtomicLong();

    /** When each live file became live in this store (restored files: when it was opened). */
    private final Map<String, Long> births = new ConcurrentHashMap<>();

    private volatile List<Memtable> memtables;

    /**
     * Snapshots waiting for a frozen memtable's flush: each gets the version that flush installs.
     * Guarded by {@code versions}.
     */
    private final Map<Memtable, List<CompletableFuture<Version>>> flushWaiters =
            new IdentityHashMap<>();

    private volatile IOException backgroundError;

    /** The last background compaction failure; cleared by a compaction that succeeds. */
    private volatile IOException compactionError;

    private volatile boolean closed;
    private volatile WarmUp warmUp;

    /**
     * What the caches of the snapshots this store was opened from held, for {@link WarmUp}; dropped
     * once the warm-up has it. Guarded by this.
     */
    private CacheHint restoredHint;

    private LsmStore(
            LsmOptions options, List<List<FileMeta>> levels, long lastSeq, CacheHint restoredHint)
            throws IOException {
        if (options.backgroundCompaction()
                && options.l0StopWritesTrigger() < options.l0CompactionTrigger()) {
            // writers would wait for a level-0 compaction the picker never chooses
            throw new IllegalArgumentException(
                    "l0StopWritesTrigger ("
                            + options.l0StopWritesTrigger()
                            + ") must not be below l0CompactionTrigger ("
                            + options.l0CompactionTrigger()
                            + "): writes would stop before a compaction starts");
        }
        this.options = options;
        this.span = options.keyGroups();
        this.fs = options.fileSystem();
        this.blockCache =
                options.blockCache() != null ? options.blockCache() : new BlockCache(64L << 20);
        // only a warm-up into a disk tier uses it
        this.restoredHint = blockCache.disk() == null ? CacheHint.EMPTY : restoredHint;
        this.readers =
                new ReaderCache(fs, blockCache, options.maxOpenFiles(), options.streamsPerFile());
        fs.mkdirs(options.primaryDir());
        this.outputs =
                new SstOutputs(
                        fs,
                        new FileNames(options.primaryDir()),
                        options.blockSize(),
                        options.bloomBitsPerKey(),
                        span,
                        options.bloomPrefix(),
                        options.compression(),
                        blockCache.disk());
        this.versions = new VersionSet(span, levels, afterRead);
        this.reads = new ReadPath(readers, options.bloomPrefix(), options.readaheadBytes());
        this.rows = RowCache.on(blockCache.memory());
        long rate = options.compactionBytesPerSecond();
        this.ownsCompactionLimiter =
                options.compactionRateLimiter() == null && LsmOptions.paces(rate);
        this.compactionLimiter =
                ownsCompactionLimiter ? new IoRateLimiter(rate) : options.compactionRateLimiter();
        long opened = options.clock().getAsLong();
        levels.forEach(l -> l.forEach(f -> births.put(f.path(), opened)));
        this.picker =
                new LeveledCompactionPicker(
                        levels.size(),
                        options.l0CompactionTrigger(),
                        options.levelBaseBytes(),
                        options.levelMultiplier(),
                        () ->
                                options.compactionFilter()
                                        .periodicCompactionMillis(
                                                options.periodicCompactionMillis()),
                        f -> options.clock().getAsLong() - births.getOrDefault(f.path(), opened));
        this.lastSeq = new AtomicLong(lastSeq);
        this.restoredSeq = lastSeq;
        this.writeBudget = options.writeBufferBudget();
        this.memtables =
                List.of(new Memtable(memtableIds.incrementAndGet(), options.bloomPrefix()));
        int id = IDS.incrementAndGet();
        this.flushExecutor = idleEnding("lsm-flush-" + id);
        this.deleter = idleEnding("lsm-delete-" + id);
        this.compactionExecutor =
                options.backgroundThreads() == 1
                        ? flushExecutor
                        : idleEnding("lsm-compaction-" + id);
        noteLiveBytes();
    }

    /** Opens an empty store. */
    public static LsmStore open(LsmOptions options) throws IOException {
        List<List<FileMeta>> levels = new ArrayList<>();
        for (int i = 0; i < options.numLevels(); i++) {
            levels.add(new ArrayList<>());
        }
        return new LsmStore(options, levels, 0, CacheHint.EMPTY);
    }

    /** As {@link #open(LsmOptions, List, UnaryOperator)} with file paths used as recorded. */
    public static LsmStore open(LsmOptions options, List<byte[]> manifests) throws IOException {
        return open(options, manifests, UnaryOperator.identity());
    }

    /**
     * Opens a store from one or several snapshot manifests without reading or copying data: each
     * listed file is used in place and clipped to {@code options.keyGroups()} at read time. The
     * manifests' key-group spans, intersected with the new span, must be pairwise disjoint. {@code
     * pathResolver} maps each recorded file path to where the file is now (e.g. a checkpoint that
     * was moved, or a copy); the same resolved path arriving through two manifests is one file.
     */
    public static LsmStore open(
            LsmOptions options, List<byte[]> manifests, UnaryOperator<String> pathResolver)
            throws IOException {
        RestorePlan plan =
                RestorePlan.of(manifests, options.keyGroups(), options.numLevels(), pathResolver);
        LOG.info("Opening store {} from {} manifest(s)", options.keyGroups(), manifests.size());
        return new LsmStore(options, plan.levels(), plan.lastSeq(), plan.hint());
    }

    // ------------------------------------------------------------------ writes

    public void put(byte[] key, byte[] value) throws IOException {
        write(key, EntryType.PUT, value);
    }

    public void delete(byte[] key) throws IOException {
        write(key, EntryType.DELETE, null);
    }

    /**
     * Writes {@code value} under {@code prefix} followed by the write's sequence number (8 bytes,
     * big-endian), so repeated appends under one prefix never overwrite each other and a prefix
     * scan returns them in append order. Costs one write and no read (list state appends). REQUIRES
     * a prefix of at least 2 bytes.
     */
    public void append(byte[] prefix, byte[] value) throws IOException {
        checkKey(prefix);
        if (value == null) {
            throw new NullPointerException("value");
        }
        synchronized (writeMutex) {
            Memtable m = makeRoom();
            long seq = lastSeq.incrementAndGet();
            byte[] key = Arrays.copyOf(prefix, prefix.length + Long.BYTES);
            for (int i = 0; i < Long.BYTES; i++) {
                key[prefix.length + i] = (byte) (seq >>> (56 - 8 * i));
            }
            charge(m.add(key, seq, EntryType.PUT, value)); // the memtable copies both
        }
        stats.userBytesWritten.addAndGet(prefix.length + Long.BYTES + value.length);
    }

    /** Deletes every key starting with {@code prefix}; REQUIRES a prefix of at least 2 bytes. */
    public void deletePrefix(byte[] prefix) throws IOException {
        checkKey(prefix);
        synchronized (writeMutex) {
            Memtable m = makeRoom();
            charge(m.deletePrefix(prefix, lastSeq.incrementAndGet()));
        }
    }

    private void write(byte[] key, byte type, byte[] value) throws IOException {
        checkKey(key);
        if (type == EntryType.PUT && value == null) {
            throw new NullPointerException("value");
        }
        synchronized (writeMutex) {
            Memtable m = makeRoom();
            charge(m.add(key, lastSeq.incrementAndGet(), type, value)); // copies key and value
        }
        stats.userBytesWritten.addAndGet(key.length + (value == null ? 0 : value.length));
    }

    /**
     * The active memtable, rotated first if full. Called under writeMutex. A full memtable is
     * rotated only while fewer than {@code maxImmutableMemtables} frozen memtables wait for the
     * flush and fewer than {@code l0StopWritesTrigger} level-0 files of this store wait for a
     * compaction; otherwise the writer waits (releasing writeMutex) and decides again after every
     * wait, since another writer may have rotated meanwhile. A flush or compaction that fails while
     * the writer waits for one fails the write; one that failed before that wait began is being
     * retried, and the writer waits for the retry. The level-0 stall statistics count the time in
     * level-0 waits only.
     */
    private Memtable makeRoom() throws IOException {
        // failure counts when each kind of wait first began: only later failures fail the write
        long flushFailuresBefore = -1;
        long compactionFailuresBefore = -1;
        long level0StallNanos = -1; // time in level-0 waits only; -1 while there was none
        try {
            while (true) {
                ensureOpen();
                Memtable active = memtables.get(0);
                if (!isFull(active)) {
                    return active;
                }
                if (flushBacklogFull()) {
                    if (flushFailuresBefore < 0) {
                        flushFailuresBefore = stats.flushFailures.get();
                    }
                    awaitFlush(flushFailuresBefore);
                    continue;
                }
                int own = options.backgroundCompaction() ? ownLevel0Files() : 0;
                if (own >= options.l0StopWritesTrigger()) { // never without background compaction
                    if (compactionFailuresBefore < 0) {
                        compactionFailuresBefore = stats.compactionFailures.get();
                        level0StallNanos = 0;
                    }
                    long t0 = System.nanoTime();
                    try {
                        awaitCompaction(own, compactionFailuresBefore);
                    } finally {
                        level0StallNanos += System.nanoTime() - t0;
                    }
                    continue;
                }
                rotate();
                scheduleFlush();
                return memtables.get(0);
            }
        } finally {
            if (level0StallNanos >= 0) {
                stats.recordLevel0Stall(level0StallNanos);
            }
        }
    }

    /** Whether {@code active} must be rotated before the next write. */
    private boolean isFull(Memtable active) {
        long size = active.approximateBytes();
        return size >= options.memtableBytes()
                || (writeBudget != null
                        && size >= WriteBufferBudget.MIN_ROTATE_BYTES
                        && writeBudget.exceeded());
    }

    private boolean flushBacklogFull() {
        return memtables.size() - 1 >= options.maxImmutableMemtables();
    }

    /**
     * Waits while {@code maxImmutableMemtables} frozen memtables wait for the flush, so that a
     * snapshot cannot pile up memtables faster than they are flushed (writers wait in {@link
     * #makeRoom}). Called under writeMutex.
     */
    private void waitForFlushBacklog() throws IOException {
        long failuresBefore = stats.flushFailures.get();
        while (flushBacklogFull()) {
            awaitFlush(failuresBefore);
        }
    }

    /**
     * One bounded wait for the flush of a full backlog: schedules a flush first (a retry, if the
     * last one failed), and fails if a flush failed since {@code failuresBefore}. Called under
     * writeMutex.
     */
    private void awaitFlush(long failuresBefore) throws IOException {
        scheduleFlush();
        if (stats.flushFailures.get() > failuresBefore) {
            IOException err = backgroundError;
            throw new IOException(
                    "Writes stalled: background flush failed"
                            + (err == null ? "" : ": " + err.getMessage()),
                    err);
        }
        awaitBackgroundWork("a flush");
    }

    /**
     * One bounded wait for a compaction of this store's {@code own} level-0 files (at the stop
     * trigger, so that a writer faster than compaction cannot pile them up: each is read by every
     * get and scan and listed in every manifest); fails if a compaction failed since {@code
     * failuresBefore}, else schedules one (a retry, if the last one failed). Called under
     * writeMutex; compactions notify it.
     */
    private void awaitCompaction(int own, long failuresBefore) throws IOException {
        if (stats.compactionFailures.get() > failuresBefore) {
            IOException err = compactionError;
            throw new IOException(
                    "Writes stalled: "
                            + own
                            + " level-0 files wait for a background compaction, which failed"
                            + (err == null ? "" : ": " + err.getMessage()),
                    err);
        }
        maybeScheduleCompaction();
        awaitBackgroundWork("a compaction");
    }

    /**
     * One bounded wait of a stalled writer for background work (flush and compaction notify
     * writeMutex); fails if interrupted or if the store was closed meanwhile. Called under
     * writeMutex.
     */
    private void awaitBackgroundWork(String what) throws IOException {
        try {
            writeMutex.wait(50);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while waiting for " + what, e);
        }
        ensureOpen();
    }

    private int ownLevel0Files() {
        int n = 0;
        for (FileMeta f : versions.current().level(0)) {
            // a copy of a restored file is created here too, but brings restored data: counting
            // it made the first write after the background copy wait for a whole compaction
            if (f.createdHere() && f.minSeq() > restoredSeq) {
                n++;
            }
        }
        return n;
    }

    /** Freezes the active memtable and starts a new one. Called under writeMutex. */
    private void rotate() {
        synchronized (versions) {
            Memtable active = memtables.get(0);
            active.freeze();
            List<Memtable> next = new ArrayList<>(memtables.size() + 1);
            next.add(new Memtable(memtableIds.incrementAndGet(), options.bloomPrefix()));
            next.addAll(memtables);
            memtables = List.copyOf(next);
        }
    }

    /**
     * Charges {@code bytes} (negative: gives back) to the shared memtable budget, if any. The store
     * and the budget move together; once the store is closed nothing moves, and {@link #close}
     * gives back what is left. A charge that raced the close (it found the store open, the close
     * gave back before it added) finds the store closed afterwards and gives back itself: each
     * give-back takes the store's whole balance, so nothing is given back twice.
     */
    private void charge(long bytes) {
        if (writeBudget != null && bytes != 0 && !closed) {
            chargedBytes.addAndGet(bytes);
            writeBudget.charge(bytes);
            if (closed) {
                giveBackAll();
            }
        }
    }

    /** Gives the store's whole balance back to the shared budget. */
    private void giveBackAll() {
        writeBudget.charge(-chargedBytes.getAndSet(0));
    }

    /** The memtable budget this store shares with others, or null. */
    public WriteBufferBudget writeBufferBudget() {
        return writeBudget;
    }

    /** Bytes this store's memtables hold against the shared budget (0 without one). */
    public long chargedMemtableBytes() {
        return chargedBytes.get();
    }

    // ------------------------------------------------------------------ flush

    /**
     * Freezes the active memtable and writes all frozen memtables to files, on the caller's thread.
     * On failure the memtables stay in memory (readable) and a later flush retries.
     */
    public void flush() throws IOException {
        synchronized (writeMutex) {
            ensureOpen();
            if (!memtables.get(0).isEmpty()) {
                rotate();
            }
        }
        flushFrozen();
    }

    private void scheduleFlush() {
        if (!closed && flushScheduled.compareAndSet(false, true)) {
            runInBackground(
                    flushExecutor,
                    flushScheduled,
                    () -> {
                        flushScheduled.set(false);
                        try {
                            flushFrozen();
                        } catch (Throwable e) { // counted by flushFrozen, an Error too
                            if (!closed) {
                                LOG.warn("Background flush failed; memtables stay in memory", e);
                            }
                            if (e instanceof Error) {
                                throw (Error) e;
                            }
                        }
                    });
        }
    }

    private void flushFrozen() throws IOException {
        boolean installed = false;
        flushLock.lock();
        try {
            while (!closed) { // a closed store drops what a flush would write
                List<Memtable> list = memtables;
                Memtable oldest = list.get(list.size() - 1);
                if (!oldest.isFrozen()) {
                    break;
                }
                FileMeta file = null;
                if (!oldest.isEmpty()) {
                    try {
                        long t0 = System.nanoTime();
                        file =
                                outputs.writeMemtable(
                                        oldest,
                                        options.compactionFilter().newRun(),
                                        stats.entriesFiltered);
                        stats.recordFlush(System.nanoTime() - t0);
                    } catch (Throwable e) { // an Error too, or stalled writers wait for ever
                        if (!closed) { // stopped by close, or failing after it: no failure
                            recordFlushFailure(e);
                        }
                        throw e;
                    }
                }
                // the file written, and named by no version yet
                VersionEdit unnamed = file == null ? null : new VersionEdit().add(0, file);
                try {
                    forgetRows(oldest); // while the memtable still answers for its keys
                    synchronized (versions) {
                        if (unnamed != null) {
                            install(unnamed);
                        }
                        unnamed = null;
                        List<Memtable> next = new ArrayList<>(memtables);
                        next.remove(oldest);
                        memtables = List.copyOf(next);
                        List<CompletableFuture<Version>> waiting = flushWaiters.remove(oldest);
                        if (waiting != null) {
                            for (CompletableFuture<Version> w : waiting) {
                                Version pinned = versions.acquire();
                                if (!w.complete(pinned)) {
                                    versions.release(pinned); // its snapshot was closed meanwhile
                                }
                            }
                        }
                    }
                } catch (Throwable e) { // counted as well, or each retry writes one more file
                    if (!closed) {
                        recordFlushFailure(e);
                    }
                    if (unnamed != null) {
                        dropUninstalled(unnamed); // outside the version-set lock
                    }
                    throw e;
                }
                charge(-oldest.approximateBytes());
                if (file != null) {
                    installed = true;
                    stats.flushes.incrementAndGet();
                    stats.flushBytes.addAndGet(file.fileSize());
                }
            }
            if (closed && memtables.size() > 1) {
                throw new IOException("store is closed; its unflushed memtables are dropped");
            }
            backgroundError = null;
        } finally {
            flushLock.unlock();
            synchronized (writeMutex) {
                writeMutex.notifyAll();
            }
        }
        // only a new file makes new compaction work: a flush with nothing to write (a checkpoint
        // or a key listing without writes) must not start rewriting a restored store's files
        if (installed) {
            maybeScheduleCompaction();
        }
    }

    /** Counts a failed flush and keeps its error for the writers it stalls. */
    private void recordFlushFailure(Throwable e) {
        stats.flushFailures.incrementAndGet();
        backgroundError =
                e instanceof IOException ? (IOException) e : new IOException(e.toString(), e);
    }

    /**
     * Makes the row cache forget what flushing {@code m} changes: its keys, and every row when it
     * holds a prefix tombstone. Called before the flushed file becomes visible, while {@code m}
     * still answers for its keys; lookups under way do not store their results (see {@link
     * RowCache}).
     */
    private void forgetRows(Memtable m) {
        if (rows == null) {
            return;
        }
        Memtable.Cursor tombstones = m.tombstoneCursor();
        tombstones.seek(new byte[0]);
        // with no row, nothing to look up (lookups under way still must not store); with a
        // tombstone, entries it covers may vanish with it in any later compaction
        if (rows.size() == 0 || tombstones.valid()) {
            rows.invalidateAll();
            return;
        }
        Memtable.Cursor c = m.cursor();
        for (c.seek(new byte[0]); c.valid(); c.next()) {
            byte[] key = c.key();
            rows.invalidate(key, BloomFilter.hash(key));
        }
    }

    // ------------------------------------------------------------------ compaction

    /**
     * Asks for a background compaction pass. A request is never lost: one that arrives while a pass
     * runs (after the pass found no work, before it ended) makes the pass look again, or starts a
     * new one.
     */
    private void maybeScheduleCompaction() {
        if (closed || !options.backgroundCompaction()) {
            return;
        }
        compactionRequested.set(true);
        if (compactionScheduled.compareAndSet(false, true)) {
            runInBackground(
                    compactionExecutor,
                    compactionScheduled,
                    () -> {
                        try {
                            while (!closed && compactionRequested.getAndSet(false)) {
                                while (!closed && compactOnce()) {
                                    // keep going while there is work
                                }
                            }
                        } catch (Throwable e) { // an Error too, or stalled writers wait for ever
                            if (!closed) { // stopped by close, or failing after it: no failure
                                compactionError =
                                        e instanceof IOException
                                                ? (IOException) e
                                                : new IOException(e.toString(), e);
                                stats.compactionFailures.incrementAndGet();
                                wakeWriters();
                                LOG.warn(
                                        "Background compaction failed; the live version is"
                                                + " unchanged",
                                        e);
                            }
                            if (e instanceof Error) {
                                throw (Error) e;
                            }
                        } finally {
                            compactionScheduled.set(false);
                        }
                        if (compactionRequested.get()) {
                            maybeScheduleCompaction(); // asked for after the last look
                        }
                    });
        }
    }

    /**
     * Hands {@code task} to one of the store's background executors. {@link #close()} may shut the
     * executor down between a caller's look at {@link #closed} and this call (a flush that ends
     * while the store closes asks for a compaction; an asynchronous snapshot retries a failed
     * flush): a closed store then drops the task and clears {@code scheduled}, instead of failing
     * the caller with a {@link RejectedExecutionException}.
     */
    private void runInBackground(ExecutorService executor, AtomicBoolean scheduled, Runnable task) {
        try {
            executor.execute(task);
        } catch (RejectedExecutionException e) {
            scheduled.set(false);
            if (!closed) {
                throw e;
            }
        }
    }

    private void wakeWriters() {
        synchronized (writeMutex) {
            writeMutex.notifyAll();
        }
    }

    /** Runs one picked compaction on the caller's thread; false if there was nothing to do. */
    public boolean compactOnce() throws IOException {
        return runCompaction(picker::pick);
    }

    /** Runs compactions until the picker finds no more work. */
    public void compactUntilIdle() throws IOException {
        while (compactOnce()) {
            // loop
        }
    }

    /**
     * Pushes all data down level by level to the last level (drops all deletes), then idles. With a
     * {@link CompactionFilter}, files that were not rewritten on the way (already at the bottom, or
     * moved down without rewriting) are then rewritten in place, so that every entry live at the
     * call has passed the filter once.
     */
    public void compactAll() throws IOException {
        // Taken under the compaction lock, after any compaction in flight: one started earlier read
        // the clock for its filter before this call, so its outputs must be rewritten too.
        Set<String> before;
        compactionLock.lock();
        try {
            before = new HashSet<>(liveFiles());
        } finally {
            compactionLock.unlock();
        }
        for (int l = 0; l < versions.current().numLevels() - 1; l++) {
            int level = l;
            while (runCompaction(v -> picker.pickForced(v, level))) {
                // loop
            }
        }
        compactUntilIdle();
        if (options.compactionFilter().active()) {
            for (String path : before) {
                // a file restored through two handles (a rescale 1 -> 2 -> 1) is live twice, with
                // two clips: each rewrite replaces one entry, so rewrite until none is left
                while (runCompaction(v -> picker.pickRewrite(v, path))) {
                    // loop
                }
            }
        }
    }

    private boolean runCompaction(Function<Version, Compaction> pick) throws IOException {
        compactionLock.lock();
        Version v = versions.acquire();
        try {
            ensureOpen();
            Compaction c = pick.apply(v);
            if (c == null) {
                return false;
            }
            CompactionJob job =
                    new CompactionJob(
                            c,
                            readers,
                            outputs,
                            options.targetFileBytes(),
                            c.trivialMove() ? null : options.compactionFilter().newRun(),
                            options.readaheadBytes(),
                            compactionLimiter,
                            new BelowOutputLevel(
                                    v, c.outputLevel(), readers, options.bloomPrefix()));
            long t0 = System.nanoTime();
            List<String> rewritten = new ArrayList<>();
            c.inputs().forEach(f -> rewritten.add(f.path()));
            c.nextInputs().forEach(f -> rewritten.add(f.path()));
            DiskCache disk = c.trivialMove() ? null : blockCache.disk();
            VersionEdit edit;
            if (disk != null) {
                // the outputs' local copies replace the inputs' instead of evicting live files
                disk.evictFirst(rewritten);
            }
            try {
                edit = job.run();
            } finally {
                if (disk != null) {
                    disk.stopEvictingFirst(rewritten);
                }
            }
            if (!c.trivialMove()) {
                stats.recordCompaction(System.nanoTime() - t0);
            }
            try {
                install(edit, job.filtered() > 0);
            } catch (IOException | RuntimeException | Error e) {
                dropUninstalled(edit);
                throw e;
            }
            compactionError = null;
            wakeWriters(); // writers waiting for level 0 to shrink
            if (c.trivialMove()) {
                stats.trivialMoves.incrementAndGet();
            } else {
                stats.compactions.incrementAndGet();
                stats.compactionBytesRead.addAndGet(c.inputBytes());
                stats.compactionBytesWritten.addAndGet(job.bytesWritten());
                stats.entriesFiltered.addAndGet(job.filtered());
            }
            LOG.debug(
                    "Compacted L{}->L{} ({} + {} files) into {}",
                    c.level(),
                    c.outputLevel(),
                    c.inputs().size(),
                    c.nextInputs().size(),
                    versions.current());
            return true;
        } finally {
            versions.release(v);
            compactionLock.unlock();
        }
    }

    /**
     * Installs {@code edit}: notes the births of its files, makes it the current version and tells
     * the disk tier the new size of the live files. A closed store installs nothing: work that ends
     * after {@link #close()} (a flush or compaction that outlasted its bounded wait, a copy of
     * {@code rehomeAll}) must not make files obsolete, which would delete them, since the files of
     * the live version may belong to a completed checkpoint the restarted task restores from; the
     * edit's new files, which no version and no checkpoint ever named, are deleted instead. A file
     * the edit only moves to another level (a trivial move adds the file it removes) is live and is
     * kept.
     *
     * @throws IOException if the store is closed
     */
    private void install(VersionEdit edit) throws IOException {
        install(edit, false);
    }

    /**
     * As {@link #install(VersionEdit)}; {@code filterDropped}: the edit's files no longer hold
     * entries a compaction filter dropped, so the row cache forgets every row before any reader can
     * pin the new version.
     */
    private void install(VersionEdit edit, boolean filterDropped) throws IOException {
        synchronized (versions) {
            if (closed) {
                throw new IOException(
                        "store is closed; the result of this flush or compaction is dropped");
            }
            noteBirths(edit);
            versions.install(edit);
            if (filterDropped && rows != null) {
                rows.invalidateAll(); // lock order: versions, then the row cache
            }
            noteLiveBytes();
        }
    }

    /**
     * Deletes the files {@code edit} added that no version names, after its {@link #install} failed
     * (the store closed, or an error, after which the current version tells which of them went
     * live). Never called under the version-set lock: a remote delete may hang.
     */
    private void dropUninstalled(VersionEdit edit) {
        Set<String> live = new HashSet<>();
        synchronized (versions) {
            versions.current().allFiles().forEach(f -> live.add(f.path()));
        }
        for (VersionEdit.LevelFile removed : edit.removed()) {
            live.add(removed.file().path()); // a trivial move adds what it removes
        }
        for (VersionEdit.LevelFile added : edit.added()) {
            if (!live.contains(added.file().path())) {
                outputs.deleteQuietly(added.file()); // written, and named by no version
            }
        }
    }

    /**
     * Deletes the copy {@code target} that a {@link #rehomeAll} gave up (on the caller's thread, or
     * on the copy's, which that call interrupted: the flag is cleared for the delete, since file
     * systems may refuse calls of an interrupted thread, and set again after).
     */
    private void deleteAbandonedCopy(Path target) {
        boolean interrupted = Thread.interrupted();
        try {
            fs.delete(target, false);
        } catch (IOException e) {
            LOG.warn("Could not delete the abandoned copy {}", target, e);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Tells the disk tier, if any, the total size of the current version's files. */
    private void noteLiveBytes() {
        DiskCache disk = blockCache.disk();
        if (disk == null) {
            return;
        }
        long total = 0;
        for (FileMeta f : versions.current().allFiles()) {
            total += f.fileSize();
        }
        disk.liveBytes(total);
    }

    /** Records when the files an edit adds become live; called right before installing it. */
    private void noteBirths(VersionEdit edit) {
        long now = options.clock().getAsLong();
        for (VersionEdit.LevelFile lf : edit.added()) {
            births.putIfAbsent(lf.file().path(), now); // a file moved down keeps its birth
        }
    }

    /**
     * Files that became obsolete, when an installed flush or compaction dropped them or a reader
     * released the last pin (a get, a scan, a snapshot): their reader and local copies go now, the
     * primary's deletes on {@link #deleter}, so that neither a read on the task thread nor a
     * compaction waits for a remote delete (tens of milliseconds each on an object store, unbounded
     * on a hanging one; {@code HangingDeleteTest}). {@link #close()} waits, bounded, for them.
     */
    private void onObsolete(List<FileMeta> files) {
        List<FileMeta> delete = forgetObsolete(files);
        if (delete.isEmpty()) {
            return;
        }
        try {
            deleter.execute(() -> deleteAll(delete));
        } catch (RejectedExecutionException e) {
            // closed: not on the releasing thread either (a checkpoint's thread, maybe interrupted,
            // on which a remote delete fails or waits as long as the file system does)
            LATE_DELETES.execute(() -> deleteAll(delete));
        }
    }

    /** Drops what the store keeps of obsolete files; returns those the policy lets it delete. */
    private List<FileMeta> forgetObsolete(List<FileMeta> files) {
        List<FileMeta> delete = new ArrayList<>();
        Set<String> inUse = versions.pathsInUse();
        for (FileMeta f : files) {
            if (inUse.contains(f.path())) {
                continue; // another entry of the file (another clip of it) still reads it
            }
            births.remove(f.path());
            readers.evict(f.path());
            readers.forgetCopy(f.path());
            if (blockCache.disk() != null) {
                blockCache.disk().forget(f.path());
            }
            if (options.deletionPolicy().mayDelete(f)) {
                delete.add(f);
            }
        }
        return delete;
    }

    private void deleteAll(List<FileMeta> files) {
        for (FileMeta f : files) {
            try {
                fs.delete(new Path(f.path()), false);
                stats.filesDeleted.incrementAndGet();
            } catch (IOException | RuntimeException e) {
                LOG.warn("Could not delete obsolete file {}", f.path(), e);
            }
        }
    }

    /**
     * Waits up to 60 s until the deletes of obsolete files queued so far have run (they run on this
     * store's delete thread, in order; after {@link #close()} also those of files released since,
     * which run on the shared late-delete thread); for tests and tools that check what is left in
     * the primary directory.
     *
     * @throws IOException if they did not end in time
     */
    public void awaitQueuedDeletes() throws IOException, InterruptedException {
        boolean ended;
        try {
            deleter.submit(() -> {}).get(60, TimeUnit.SECONDS);
            ended = true;
        } catch (RejectedExecutionException closed) {
            ended = deleter.awaitTermination(60, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            ended = false;
        }
        if (ended && closed) {
            try { // the files whose last pin was released after close (one thread, in order)
                LATE_DELETES.submit(() -> {}).get(60, TimeUnit.SECONDS);
            } catch (ExecutionException | TimeoutException e) {
                ended = false;
            }
        }
        if (!ended) {
            throw new IOException(
                    "The deletes of obsolete files of " + options.primaryDir() + " did not end");
        }
    }

    /**
     * Stops {@link #deleter} (deletes queued before still run) and waits up to 10 s for them,
     * unless this thread was interrupted (a cancelled task does not wait).
     */
    private void stopDeleter() {
        deleter.shutdown();
        if (Thread.currentThread().isInterrupted()) {
            return;
        }
        try {
            if (!deleter.awaitTermination(10, TimeUnit.SECONDS)) {
                LOG.warn(
                        "Obsolete files of {} may remain: their deletes did not end",
                        options.primaryDir());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ------------------------------------------------------------------ reads

    private ReadPath.View acquireView() {
        synchronized (versions) {
            return new ReadPath.View(memtables, versions.acquire());
        }
    }

    /** The value of {@code key}, or null if absent or deleted. */
    public byte[] get(byte[] key) throws IOException {
        checkKey(key);
        try {
            return getOnce(key);
        } catch (InternalError e) {
            // a memory-mapped local copy faulted and the JVM reported it after the reader's own
            // handling (SstReader): the bad bytes failed verification (the primary file answered
            // instead) or the read failed; once the local copies are read with system calls,
            // reading again is safe
            DiskCache.absorbMappedFault(blockCache.disk(), e);
            try {
                return getOnce(key);
            } catch (IOException | RuntimeException | Error again) {
                again.addSuppressed(e);
                throw again;
            }
        }
    }

    private byte[] getOnce(byte[] key) throws IOException {
        long rowGeneration = rows == null ? 0 : rows.generation(); // before the view is pinned
        ReadPath.View view = acquireView();
        try {
            return reads.get(view, key, rows, rowGeneration);
        } finally {
            versions.release(view.version(), afterRead);
        }
    }

    /** Live entries in {@code range}, in key order; always close the iterator. */
    public LsmIterator scan(KeyRange range) throws IOException {
        ensureOpen();
        KeyRange r = range.intersect(KeyRange.of(span));
        ReadPath.View view = acquireView();
        try {
            return reads.scan(view, r, () -> versions.release(view.version(), afterRead));
        } catch (IOException | RuntimeException | Error e) {
            versions.release(view.version(), afterRead);
            throw e;
        }
    }

    /** All live entries whose key starts with {@code prefix}. */
    public LsmIterator scanPrefix(byte[] prefix) throws IOException {
        return scan(KeyRange.ofPrefix(prefix.clone()));
    }

    /** All live entries of the given key groups. */
    public LsmIterator scanKeyGroups(KeyGroupSpan groups) throws IOException {
        KeyGroupSpan g = groups.intersect(span);
        return g.isEmpty()
                ? scan(new KeyRange(span.lowerKey(), span.lowerKey()))
                : scan(KeyRange.of(g));
    }

    /** All live entries of the store. */
    public LsmIterator scanAll() throws IOException {
        return scan(KeyRange.ALL);
    }

    /**
     * A read-only view of the store as of now: reads through it never see writes made after this
     * call. The active memtable is frozen (when not empty) so that the view holds only immutable
     * memtables and files; it costs no copy. Close it to unpin its files.
     */
    public LsmReadSnapshot readSnapshot() throws IOException {
        ReadPath.View view;
        synchronized (writeMutex) {
            ensureOpen();
            if (!memtables.get(0).isEmpty()) {
                // as for a snapshot: only when the flush is that far behind does the caller wait
                // here, so that frequent read snapshots (a key listing per broadcast element) do
                // not pile up frozen memtables
                waitForFlushBacklog();
                rotate();
            }
            view = acquireView();
        }
        scheduleFlush();
        ReadPath.View pinned =
                new ReadPath.View(
                        view.memtables().subList(1, view.memtables().size()), view.version());
        return new LsmReadSnapshot(this, pinned, () -> versions.release(view.version(), afterRead));
    }

    byte[] get(ReadPath.View view, byte[] key) throws IOException {
        checkKey(key);
        ensureOpen();
        return reads.get(view, key);
    }

    LsmIterator scan(ReadPath.View view, KeyRange range, Runnable onClose) throws IOException {
        ensureOpen();
        return reads.scan(view, range.intersect(KeyRange.of(span)), onClose);
    }

    // ------------------------------------------------------------------ snapshots

    /**
     * Flushes and captures a consistent file set and its manifest, on the caller's thread: {@code
     * beginSnapshot().await()}. The snapshot contains exactly the writes that completed before this
     * call. Release it when no longer needed.
     */
    public LsmSnapshot snapshot() throws IOException {
        PendingSnapshot pending = beginSnapshot();
        try {
            return pending.await();
        } catch (Throwable t) {
            pending.close();
            throw t;
        }
    }

    /**
     * The cheap half of a snapshot, for a checkpoint's synchronous part: freezes the active
     * memtable and marks the point in the write order the snapshot stands for; writes nothing.
     * {@link PendingSnapshot#await} (the asynchronous part) waits until the background flush has
     * put the memtables frozen here into files, and then names exactly the files that hold the
     * writes made before this call: the version installed by the flush of the newest of those
     * memtables, which no later write can be in (memtables are flushed oldest first). Writes go on
     * meanwhile. Close the pending snapshot when done (it pins files).
     */
    public PendingSnapshot beginSnapshot() throws IOException {
        CompletableFuture<Version> atBarrier = new CompletableFuture<>();
        long seq;
        boolean flushNeeded;
        long failuresBefore = stats.flushFailures.get();
        synchronized (writeMutex) {
            ensureOpen();
            if (!memtables.get(0).isEmpty()) {
                // only when the flush is that far behind does the task thread wait here, as its
                // next write would (a hanging file system must not make each checkpoint leave
                // one more memtable in memory)
                waitForFlushBacklog();
                rotate();
            }
            seq = lastSeq.get();
            synchronized (versions) {
                flushNeeded = memtables.size() > 1;
                if (flushNeeded) {
                    // the newest frozen memtable: its flush installs the barrier's version
                    flushWaiters
                            .computeIfAbsent(memtables.get(1), m -> new ArrayList<>())
                            .add(atBarrier);
                } else {
                    atBarrier.complete(versions.acquire());
                }
            }
        }
        if (flushNeeded) {
            scheduleFlush();
        }
        if (picker.hasAgedFile(versions.current())) {
            // a store without writes flushes nothing; its checkpoints start periodic compactions
            maybeScheduleCompaction();
        }
        return new PendingSnapshot(seq, atBarrier, failuresBefore);
    }

    /**
     * A snapshot begun by {@link #beginSnapshot}: its point in the write order is fixed, its files
     * may still be memtables being flushed.
     *
     * <p>Thread safety: {@link #await} on one thread; {@link #close} from any thread, also while
     * {@link #await} runs (it then fails or its result is released).
     */
    public final class PendingSnapshot implements AutoCloseable {
        private final long seq;
        private final CompletableFuture<Version> atBarrier;
        private final long failuresBefore;
        private final AtomicBoolean closed = new AtomicBoolean();

        private PendingSnapshot(
                long seq, CompletableFuture<Version> atBarrier, long failuresBefore) {
            this.seq = seq;
            this.atBarrier = atBarrier;
            this.failuresBefore = failuresBefore;
        }

        /**
         * Waits until the writes before {@link #beginSnapshot} are in files and returns the
         * snapshot of them. Its release is this pending snapshot's {@link #close}.
         *
         * <p>Only the background flush thread flushes: an interrupt of this thread (a cancelled
         * checkpoint) ends the wait and never interrupts a flush, and a writer that keeps the flush
         * busy cannot keep this wait from ending once the barrier's memtable is in a file.
         *
         * @throws IOException if a flush failed since the begin, the store or this snapshot was
         *     closed, or this thread was interrupted
         */
        public LsmSnapshot await() throws IOException {
            Version v = null;
            while (v == null) {
                if (closed.get() || atBarrier.isCancelled()) {
                    throw new IOException("snapshot of sequence " + seq + " was closed");
                }
                ensureOpen();
                if (stats.flushFailures.get() > failuresBefore && !atBarrier.isDone()) {
                    IOException cause = backgroundError;
                    scheduleFlush(); // retried in the background for the next snapshot
                    throw new IOException(
                            "snapshot of sequence "
                                    + seq
                                    + ": flushing its memtables failed"
                                    + (cause == null ? "" : ": " + cause.getMessage()),
                            cause);
                }
                try {
                    v = atBarrier.get(50, TimeUnit.MILLISECONDS);
                } catch (TimeoutException e) {
                    // look at failures and close again
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    InterruptedIOException io =
                            new InterruptedIOException(
                                    "interrupted waiting for the flush of snapshot " + seq);
                    io.initCause(e);
                    throw io;
                } catch (CancellationException e) {
                    throw new IOException("snapshot of sequence " + seq + " was closed", e);
                } catch (ExecutionException e) {
                    throw new IOException(e.getCause());
                }
            }
            if (closed.get()) {
                throw new IOException("snapshot of sequence " + seq + " was closed");
            }
            return imageOf(v, seq, this::close, true);
        }

        /** The last sequence number the snapshot holds. */
        public long seq() {
            return seq;
        }

        /** Stops pinning the snapshot's files; idempotent. */
        @Override
        public void close() {
            if (closed.compareAndSet(false, true) && !atBarrier.cancel(false)) {
                versions.release(atBarrier.join(), afterRead);
            }
        }
    }

    /**
     * Pins the files of the current version without flushing: they are not deleted until the
     * returned snapshot is released. Its manifest covers only what is in files now (not the
     * memtables), so it is no point-in-time image of the store; for callers that must keep files
     * they found live until they handed them over.
     */
    public LsmSnapshot pinFiles() throws IOException {
        ensureOpen();
        Version v;
        long seq;
        synchronized (versions) {
            v = versions.acquire();
            seq = lastSeq.get();
        }
        return imageOf(v, seq, () -> versions.release(v, afterRead), false);
    }

    /**
     * The manifest and file sizes of an acquired version, released by {@code release}; with the
     * cache hint if {@code withHint} and the options ask for it.
     */
    private LsmSnapshot imageOf(Version v, long seq, Runnable release, boolean withHint) {
        Map<String, Long> files = new HashMap<>();
        v.allFiles().forEach(f -> files.put(f.path(), f.fileSize()));
        DiskCache disk = blockCache.disk();
        CacheHint hint =
                withHint && options.cacheHintInSnapshots() && disk != null
                        ? CacheHint.capture(blockCache, files.keySet(), disk.capacityBytes())
                        : CacheHint.EMPTY;
        return new LsmSnapshot(ManifestCodec.encode(span, seq, v, hint), files, seq, release);
    }

    /**
     * Copies a live file that this store did not write (a restored one) into the primary directory
     * and swaps the copy in, atomically for readers. Afterwards the store reads and snapshots only
     * the copy, so the original (owned by the snapshot it came from) is no longer needed. Waits for
     * a running compaction before the swap.
     *
     * @return the copy's path, or null when {@code path} is no longer live (nothing copied)
     */
    public String rehome(String path) throws IOException {
        return rehomeAll(List.of(path)).get(path);
    }

    /**
     * {@link #rehome} for many files, copying up to {@code LsmOptions.copyThreads} at once. The
     * copies run outside the compaction lock; each is then swapped in under it if its original is
     * still live, else deleted. On a failure or an interrupt every copy not swapped in is deleted
     * (after the copying threads stopped, at most 30 s later) and the first error is thrown.
     *
     * @return original path to copy path, for the files that were live and swapped
     */
    public Map<String, String> rehomeAll(Collection<String> paths) throws IOException {
        ensureOpen();
        // one entry per file: a file that arrived through two handles is listed once per clip
        Map<String, FileMeta> byPath = new LinkedHashMap<>();
        Version v = versions.current();
        Set<String> wanted = new HashSet<>(paths);
        for (int l = 0; l < v.numLevels(); l++) {
            for (FileMeta f : v.level(l)) {
                if (wanted.contains(f.path())) {
                    byPath.putIfAbsent(f.path(), f);
                }
            }
        }
        List<FileMeta> live = new ArrayList<>(byPath.values());
        Map<String, String> done = new LinkedHashMap<>();
        if (live.isEmpty()) {
            return done;
        }
        int threads = Math.min(options.copyThreads(), live.size());
        AtomicInteger names = new AtomicInteger();
        ExecutorService pool =
                Executors.newFixedThreadPool(
                        threads, r -> daemon(r, "disagg-copy-" + names.incrementAndGet()));
        List<Path> targets = new ArrayList<>();
        List<Future<?>> copies = new ArrayList<>();
        // set once this call gives the copies up: a copy stuck in the file system past the wait
        // below, which ignores its interrupt, deletes its target itself when it ends
        AtomicBoolean abandoned = new AtomicBoolean();
        boolean swapped = false;
        try {
            for (FileMeta f : live) {
                Path target = outputs.names().nextSst();
                targets.add(target);
                copies.add(
                        pool.submit(
                                () -> {
                                    try {
                                        copyFile(new Path(f.path()), target, f.fileSize());
                                    } finally { // also a copy failing after it was given up
                                        if (abandoned.get()) {
                                            deleteAbandonedCopy(target);
                                        }
                                    }
                                    return null;
                                }));
            }
            for (Future<?> c : copies) {
                c.get();
            }
            for (int i = 0; i < live.size(); i++) {
                String copy = swapIn(live.get(i), targets.get(i));
                if (copy != null) {
                    done.put(live.get(i).path(), copy);
                }
            }
            swapped = true;
            return done;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            InterruptedIOException io =
                    new InterruptedIOException("Interrupted while copying inherited files");
            io.initCause(e);
            throw io;
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            throw cause instanceof IOException
                    ? (IOException) cause
                    : new IOException("Copying inherited files failed", cause);
        } finally {
            pool.shutdownNow();
            if (!swapped) {
                abandoned.set(true); // before the deletes below: no copy ends unseen by both
                // an interrupted caller still waits for the copy threads (so that no copy is
                // written after it was deleted below) and deletes with the flag cleared (file
                // systems may refuse calls of an interrupted thread); the flag is set again after
                boolean interrupted = Thread.interrupted();
                try {
                    if (!pool.awaitTermination(30, TimeUnit.SECONDS)) {
                        LOG.warn(
                                "Copy threads of {} did not stop within 30 s",
                                options.primaryDir());
                    }
                } catch (InterruptedException e) {
                    interrupted = true;
                }
                for (Path t : targets) {
                    if (!done.containsValue(t.toString())) {
                        deleteAbandonedCopy(t);
                    }
                }
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /**
     * Swaps {@code copy} in for every live entry of {@code old}'s file (one per clip when it
     * arrived through several handles), in one edit; deletes the copy if none is live any more.
     */
    private String swapIn(FileMeta old, Path copy) throws IOException {
        compactionLock.lock();
        // pinned until after the swap, so that the swapped-out file becomes obsolete (its reader
        // closed, and deleted where the policy allows) at the release below, not inside install's
        // lock on the version set, which every get and scan takes
        Version v = versions.acquire();
        try {
            ensureOpen();
            VersionEdit edit = new VersionEdit();
            FileMeta.RefCount refs = null; // the entries of the copy share it
            for (int l = 0; l < v.numLevels(); l++) {
                for (FileMeta f : v.level(l)) {
                    if (f.path().equals(old.path())) {
                        FileMeta moved =
                                refs == null
                                        ? f.copiedTo(copy.toString())
                                        : f.copiedTo(copy.toString(), refs);
                        refs = moved.refs();
                        edit.remove(l, f).add(l, moved);
                    }
                }
            }
            if (refs != null) {
                try {
                    install(edit);
                } catch (IOException | RuntimeException | Error e) {
                    dropUninstalled(edit); // the copy
                    throw e;
                }
                // versions pinned before the swap still list the original: read them from the copy
                readers.readThroughCopy(old.path(), copy.toString());
                stats.filesRehomed.incrementAndGet();
                return copy.toString();
            }
        } finally {
            compactionLock.unlock();
            versions.release(v);
        }
        fs.delete(copy, false); // compacted away meanwhile: the copy is not needed
        return null;
    }

    private void copyFile(Path from, Path to, long size) throws IOException {
        byte[] buf = new byte[1 << 16];
        long copied = 0;
        try (var in = fs.open(from);
                var out = fs.create(to, FileSystem.WriteMode.NO_OVERWRITE)) {
            int n;
            while ((n = in.read(buf)) > 0) {
                out.write(buf, 0, n);
                copied += n;
            }
            // durable before a checkpoint names it, as the store's own files (SstWriter.finish)
            out.flush();
            out.sync();
        } catch (IOException | RuntimeException e) {
            try {
                fs.delete(to, false);
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        if (copied != size) {
            fs.delete(to, false);
            throw new IOException(
                    "Copy of " + from + " has " + copied + " bytes, expected " + size);
        }
    }

    // ------------------------------------------------------------------ admin

    public LsmStats stats() {
        return stats;
    }

    public KeyGroupSpan keyGroups() {
        return span;
    }

    /** The row cache, or null when the block memory has no share for rows. */
    public RowCache rowCache() {
        return rows;
    }

    public BlockCache blockCache() {
        return blockCache;
    }

    /** Reads this store issued to the primary storage (block-cache misses and file metadata). */
    public ReadCounters primaryReads() {
        return readers.counters();
    }

    /** The directory where this store writes its files. */
    public Path primaryDir() {
        return options.primaryDir();
    }

    /** A short description of the current level shape, e.g. "Version{ L0=2 L1=5 }". */
    public String describe() {
        return versions.current().toString() + " memtables=" + memtables.size();
    }

    /** Memtables frozen and waiting for (or in) their flush. */
    public int immutableMemtableCount() {
        return memtables.size() - 1;
    }

    /** Number of files per level in the current version. */
    public int[] filesPerLevel() {
        Version v = versions.current();
        int[] out = new int[v.numLevels()];
        for (int i = 0; i < out.length; i++) {
            out[i] = v.level(i).size();
        }
        return out;
    }

    /**
     * Entries physically stored: the entry counts of the live files (whole files, including parts a
     * clip hides) plus the memtables' entries; point deletes and shadowed older versions count too.
     * Compactions and the {@link CompactionFilter} make it shrink.
     */
    public long storedEntries() {
        List<Memtable> list;
        Version v;
        synchronized (versions) {
            list = memtables;
            v = versions.current();
        }
        long n = 0;
        for (Memtable m : list) {
            n += m.entryCount();
        }
        for (FileMeta f : v.allFiles()) {
            n += f.entries();
        }
        return n;
    }

    /**
     * Prefix tombstones held by the live files (each file's count; a tombstone written into several
     * compaction outputs counts once per output). They are kept in memory and in every checkpoint's
     * manifest until a compaction finds nothing older left for them to hide.
     */
    public long storedPrefixTombstones() {
        long n = 0;
        for (FileMeta f : versions.current().allFiles()) {
            n += f.tombstones().size();
        }
        return n;
    }

    /**
     * Paths of the files any live version lists: the current one, and those pinned by reads,
     * compactions and snapshots. A file leaves this set when it is offered to the deletion policy.
     */
    public Set<String> filesInUse() {
        return versions.pathsInUse();
    }

    /** Paths of all files in the current version. */
    public List<String> liveFiles() {
        List<String> out = new ArrayList<>();
        versions.current().allFiles().forEach(f -> out.add(f.path()));
        return out;
    }

    /** Verifies the store invariants; throws {@link IllegalStateException} on violation. */
    public void checkInvariants() {
        List<Memtable> list;
        synchronized (versions) {
            list = memtables;
            versions.checkInvariants();
        }
        check(!list.get(0).isFrozen(), "active memtable frozen");
        long newerMin = Long.MAX_VALUE;
        for (int i = 0; i < list.size(); i++) {
            Memtable m = list.get(i);
            m.checkInvariants();
            check(i == 0 || m.isFrozen(), "unfrozen immutable memtable");
            if (!m.isEmpty()) {
                check(m.maxSeq() < newerMin, "memtable sequence ranges interleave");
                newerMin = m.minSeq();
            }
            check(m.maxSeq() <= lastSeq.get(), "memtable seq above lastSeq");
        }
        for (FileMeta f : versions.current().allFiles()) {
            check(f.maxSeq() <= lastSeq.get(), "file seq above lastSeq: " + f);
        }
        blockCache.checkInvariants();
        if (rows != null) {
            rows.checkInvariants();
        }
    }

    /**
     * Starts copying the live files into the local disk tier in the background, L0 first (see
     * {@link WarmUp}); for use right after a restore. Null if the block cache has no disk tier.
     */
    public synchronized WarmUp startWarmUp() {
        DiskCache disk = blockCache.disk();
        if (disk == null || closed) {
            return null;
        }
        if (warmUp != null) {
            return warmUp;
        }
        noteLiveBytes();
        List<FileMeta> toOpen = new ArrayList<>();
        List<FileMeta> files = new ArrayList<>();
        int l0Files;
        int hintedFiles;
        Version v = versions.acquire();
        try {
            // reads need every file's metadata; half the reader cache leaves room for the files
            // they open meanwhile. L0 first, then the files the hint names (the fill reads only
            // open files, and left to the job's reads a hinted file's blocks would all come from
            // the primary), then the rest in level order (see WarmUpOpens)
            int openLimit = options.maxOpenFiles() / 2;
            Map<String, FileMeta> byPath = new LinkedHashMap<>();
            for (List<FileMeta> level : v.levels()) {
                for (FileMeta f : level) {
                    byPath.put(f.path(), f);
                    if (!f.isClipped()) { // a clipped file is partly other subtasks' data
                        files.add(f);
                    }
                }
            }
            Set<String> ordered = new LinkedHashSet<>();
            v.level(0).forEach(f -> ordered.add(f.path()));
            l0Files = Math.min(ordered.size(), openLimit);
            restoredHint.entries().stream()
                    .map(CacheHint.Entry::file)
                    .filter(byPath::containsKey)
                    .forEach(ordered::add);
            hintedFiles = Math.min(ordered.size(), openLimit) - l0Files;
            ordered.addAll(byPath.keySet());
            for (String path : ordered) {
                if (toOpen.size() < openLimit) {
                    toOpen.add(byPath.get(path));
                }
            }
        } finally {
            versions.release(v);
        }
        IoRateLimiter pacing = options.warmUpRateLimiter();
        long rate = options.warmUpBytesPerSecond();
        if (pacing == null && LsmOptions.paces(rate)) {
            pacing = new IoRateLimiter(rate);
        }
        WarmUp w =
                new WarmUp(
                        new WarmUpOpens(
                                toOpen,
                                l0Files,
                                hintedFiles,
                                () ->
                                        blockCache.pinnedMetadataBytes()
                                                < blockCache.capacityBytes() / 2,
                                () ->
                                        blockCache.pinnedMetadataBytes()
                                                < blockCache.capacityBytes() * 3 / 4),
                        files,
                        restoredHint,
                        readers,
                        disk,
                        path -> !closed && versions.current().holds(path),
                        path -> !closed && versions.isInUse(path),
                        () -> blockCache.memory().freeBytes(),
                        pacing,
                        options.primaryDir().getName());
        warmUp = w;
        restoredHint = CacheHint.EMPTY; // the warm-up holds it until it ends
        w.start();
        return w;
    }

    /**
     * Forgets the cache hint of the snapshots this store was opened from, for a store that will not
     * warm up (a large tier's hint is megabytes); {@link #startWarmUp} then goes by level.
     */
    public synchronized void dropRestoredHint() {
        restoredHint = CacheHint.EMPTY;
    }

    /** The warm-up started by {@link #startWarmUp}, or null. */
    public WarmUp warmUp() {
        return warmUp;
    }

    /**
     * Stops background work (waiting a bounded time for running jobs, and not at all on an
     * interrupted thread: a cancelled task must not wait on a hung file system) and closes readers.
     * Files are kept. A job that ends later changes nothing and deletes the new files it wrote (see
     * {@link #install}).
     */
    @Override
    public void close() {
        synchronized (versions) { // no version is installed after this (see install)
            if (closed) {
                return;
            }
            closed = true;
        }
        outputs.stop(); // a running flush or compaction ends at its next entry
        WarmUp w = warmUp;
        if (w != null) {
            w.cancel(TimeUnit.SECONDS.toMillis(5)); // it stops before its next chunk
        }
        if (ownsCompactionLimiter) {
            compactionLimiter.shutdown(); // a running compaction finishes unpaced
        }
        flushExecutor.shutdown();
        compactionExecutor.shutdown();
        // a running flush or compaction stops at its next entry (its result would be dropped);
        // only one stuck on the file system takes longer, and is not waited for beyond this
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(CLOSE_WAIT_SECONDS);
        try {
            flushExecutor.awaitTermination(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
            compactionExecutor.awaitTermination(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        stopDeleter(); // later deletes run on LATE_DELETES
        readers.close();
        if (rows != null) {
            rows.close();
        }
        if (writeBudget != null) {
            // the memtables left are dropped with the store (their data is in the last checkpoint)
            giveBackAll();
        }
    }

    private void ensureOpen() throws IOException {
        if (closed) {
            throw new IOException("store is closed");
        }
    }

    private void checkKey(byte[] key) {
        if (key.length < KeyGroupSpan.PREFIX_BYTES) {
            throw new IllegalArgumentException("keys and prefixes need a 2-byte key-group prefix");
        }
        int kg = KeyGroupSpan.keyGroupOf(key);
        if (!span.contains(kg)) {
            throw new IllegalArgumentException("key group " + kg + " outside " + span);
        }
    }

    private static void check(boolean ok, String msg) {
        if (!ok) {
            throw new IllegalStateException("LsmStore invariant violated: " + msg);
        }
    }

    /**
     * One daemon thread, tasks in submission order, started when needed and ending after {@link
     * #IDLE_THREAD_SECONDS} idle: a store that is never closed (Flink does not dispose a keyed
     * backend whose changelog replay failed) keeps no thread.
     */
    private static ThreadPoolExecutor idleEnding(String name) {
        ThreadPoolExecutor e =
                new ThreadPoolExecutor(
                        1,
                        1,
                        IDLE_THREAD_SECONDS,
                        TimeUnit.SECONDS,
                        new LinkedBlockingQueue<>(),
                        r -> daemon(r, name));
        e.allowCoreThreadTimeOut(true);
        return e;
    }

    /**
     * A daemon thread whose context class loader is the engine's, not its creator's: a thread
     * created on a task thread would otherwise keep that job's user-code class loader alive.
     */
    static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.setContextClassLoader(LsmStore.class.getClassLoader());
        return t;
    }
}
