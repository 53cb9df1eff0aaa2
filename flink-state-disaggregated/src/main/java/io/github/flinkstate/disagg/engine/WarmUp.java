package io.github.flinkstate.disagg.engine;

import io.github.flinkstate.disagg.engine.cache.CacheHint;
import io.github.flinkstate.disagg.engine.cache.DiskCache;
import io.github.flinkstate.disagg.engine.cache.InFlight;
import io.github.flinkstate.disagg.engine.sst.IoRateLimiter;
import io.github.flinkstate.disagg.engine.sst.ReaderCache;
import io.github.flinkstate.disagg.engine.sst.SstReader;
import io.github.flinkstate.disagg.engine.version.FileMeta;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import javax.annotation.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A background download of a store's live files into its local disk tier, started after a restore
 * so that reads after a recovery find local copies instead of going to the primary file system.
 *
 * <p>First it opens the live files ({@code ReaderCache#get}: footer, index and bloom filter in one
 * tail read each), up to {@value #OPENS_AT_ONCE} at a time per store (on threads all stores share),
 * L0 first: all L0 files, and files of deeper levels while the metadata of open files takes less
 * than half the memory cache (it is charged there, and a read opens such a file when it needs it
 * anyway). A get probes every L0 file that may hold its key and one file per deeper level; opened
 * one after another by the first gets, a restore with twenty L0 files on a DFS made the first get
 * wait for twenty round trips in turn (about 150 ms at 2 ms each, with the metadata transfers).
 * Opened together, their round trips overlap, and a get that needs a file being opened waits for
 * that open instead of starting its own. Then it copies the data.
 *
 * <p>Which files: those the store does not clip (a file clipped by a rescale also holds other
 * subtasks' key groups; it is cached block by block as it is read). Order: level by level, L0 first
 * (the newest data, which reads hit most in an LSM tree), files of a level in key order. Each file
 * is copied whole ({@code SstReader#copyToDisk}: chunks of whole blocks, every data block's CRC32C
 * verified) while the disk tier admits whole files ({@code DiskCache#wholeFileLimitBytes}: half its
 * capacity, or all of it when every live file fits); a file that does not fit is passed over for
 * the next. Then the files passed over that are open, in the same order, are cached block by block
 * into the room the tier has left ({@code SstReader#fillDiskWithBlocks}), evicting nothing, until
 * it is full or anything else evicts: below a budget of the whole state, as long as the open files'
 * blocks cover the room, the tier starts as full as it will be. After each file the whole copies
 * are made more recent than its blocks, which are only a guess.
 *
 * <p>With a {@link CacheHint} from the snapshot (what the caches held when it was taken, hottest
 * first) and every file fitting whole, all are still copied whole, those the hint names first. When
 * they do not all fit, the guess is replaced by what the job was reading: the files the hint names
 * whole are copied whole (in its order, while the tier admits whole files), then the blocks it
 * names are cached into the free room, file by file in its order, and only then are the other
 * blocks filled in level order as above. With skewed keys the hot blocks are spread over every
 * file; by level, the tier held the right ones only after the job's misses had brought them in, one
 * round trip each. The blocks the hint marks as the memory tier's are loaded into the memory tier's
 * free room as the hinted fill reads them, and those of files it did not reach after it ({@link
 * #fillMemory}); those only the memory tier held are left out of the disk fills while the memory
 * tier holds them, so both tiers start as they were at the snapshot. Opens follow the hint too:
 * after L0, the files it names, while their metadata takes less than three quarters of the memory
 * cache rather than half ({@link WarmUpOpens}). Files that the store drops meanwhile are skipped,
 * or their readers and copies dropped again after the open or copy that published them; a file that
 * cannot be read is skipped with one log line (reads of it will report the problem themselves).
 *
 * <p>It does not hold up records: it runs on its own daemon thread (and opens files on {@link
 * #OPENERS}), reads on the file's scan stream (point reads keep theirs) in chunks of at most 512
 * KiB, so a point read that shares the link with it waits for at most one chunk, and takes no store
 * lock. With a rate limit ({@code LsmOptions#warmUpBytesPerSecond}) each chunk first takes its
 * bytes from the limiter, so the copies leave the rest of the link to the job's reads. {@link
 * #cancel} (called by the store's close) stops it before its next chunk or open; an open still on
 * its way (a slow primary) is closed by the closed reader cache when it returns.
 *
 * <p>Thread safety: progress getters and {@link #cancel} may be called from any thread.
 */
public final class WarmUp {

    private static final Logger LOG = LoggerFactory.getLogger(WarmUp.class);

    /** What the warm-up is doing. */
    public enum State {
        RUNNING,
        DONE,
        CANCELLED,
        FAILED
    }

    /** Files one warm-up's first phase opens at once. */
    static final int OPENS_AT_ONCE = 8;

    /**
     * The most threads opening files for the warm-ups of all stores of this JVM (a TaskManager
     * restoring a hundred stores starts this many, not a thousand). Each warm-up keeps at most
     * {@value #OPENS_AT_ONCE} opens on them, so a store whose primary storage hangs holds that many
     * threads and the warm-ups of other stores go on with the others.
     */
    static final int OPENER_THREADS = 64;

    /**
     * The threads that open files for every store's warm-up in this JVM; daemon threads that end
     * after 10 s without work.
     */
    private static final ThreadPoolExecutor OPENERS = openers();

    private static ThreadPoolExecutor openers() {
        AtomicInteger n = new AtomicInteger();
        ThreadPoolExecutor pool =
                new ThreadPoolExecutor(
                        OPENER_THREADS,
                        OPENER_THREADS,
                        10,
                        TimeUnit.SECONDS,
                        new LinkedBlockingQueue<>(),
                        r -> LsmStore.daemon(r, "disagg-file-open-" + n.incrementAndGet()));
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    private final WarmUpOpens opens;
    private final List<FileMeta> files;
    private final Map<String, FileMeta> byPath = new HashMap<>();

    /**
     * The snapshot's cache hint and its entries by path; dropped when the warm-up ends (a large
     * tier's hint is megabytes). Used by the warm-up's thread, and by {@link #start} before it.
     */
    private CacheHint hint;

    private final Map<String, CacheHint.Entry> hintByPath = new HashMap<>();

    /**
     * Whether the hint decides what is fetched: it names something, and not every file fits whole
     * (when all do, all are copied whole, those it names first: whole copies are read through
     * memory mappings).
     */
    private final boolean byHint;

    /** The files to copy whole, in order (see {@link #wholeCandidates()}). */
    private final List<FileMeta> wholeCandidates;

    private final ReaderCache readers;
    private final DiskCache disk;
    private final Predicate<String> live;
    private final Predicate<String> inUse;

    /** The bytes the memory tier has free now (evicting nothing). */
    private final LongSupplier memoryRoom;

    /**
     * What the memory tier had free when the hinted fill began: bounds what the warm-up loads
     * there. Used by the warm-up's thread only.
     */
    private long memoryLimit;

    @Nullable private final IoRateLimiter pacing;
    private final long bytesPlanned;
    private final AtomicLong bytesDone = new AtomicLong();
    private final AtomicLong filesDone = new AtomicLong();
    private final AtomicLong memoryBytesDone = new AtomicLong();

    /** Why {@link #fillWithBlocks} ended, for the log line; written and read by the thread. */
    private String fillEnd = "not started";

    private final Thread thread;
    private volatile boolean cancelled;
    private volatile State state = State.RUNNING;

    /**
     * @param opens the files to open first, in order (open files are passed over)
     * @param files the files to copy, in order
     * @param hint what the snapshot's caches held (entries for files not in {@code files} are
     *     passed over), or empty
     * @param disk the store's disk tier; progress is reported against the smaller of the files'
     *     total and its capacity
     * @param live whether a file is still live in the store (in its current version)
     * @param inUse whether any version of the store still lists a file (a reader or checkpoint may
     *     still read one the current version dropped)
     * @param memoryRoom the bytes the memory tier has free, asked once the files are open
     * @param pacing paces the copies' reads of the primary storage, or null; shut down on cancel
     */
    WarmUp(
            WarmUpOpens opens,
            List<FileMeta> files,
            CacheHint hint,
            ReaderCache readers,
            DiskCache disk,
            Predicate<String> live,
            Predicate<String> inUse,
            LongSupplier memoryRoom,
            @Nullable IoRateLimiter pacing,
            String name) {
        this.opens = opens;
        this.files = files;
        this.hint = hint;
        files.forEach(f -> byPath.put(f.path(), f));
        hint.entries().forEach(e -> hintByPath.put(e.file(), e));
        this.readers = readers;
        this.disk = disk;
        this.live = live;
        this.inUse = inUse;
        this.memoryRoom = memoryRoom;
        this.pacing = pacing;
        long total = 0;
        for (FileMeta f : files) {
            total += f.fileSize();
        }
        this.byHint = !hint.isEmpty() && total > disk.wholeFileLimitBytes();
        this.wholeCandidates = wholeCandidates();
        this.bytesPlanned = Math.min(total, disk.capacityBytes());
        this.thread = LsmStore.daemon(this::run, "disagg-warm-up-" + name);
    }

    void start() {
        // reads of files the warm-up will copy whole do not cache their blocks meanwhile: they
        // would take room the copies need and, in a cache just big enough for the state, push
        // whole copies out (each then re-read block by block: a cache that never settles)
        long planned = 0;
        for (FileMeta f : wholeCandidates) {
            if (planned + f.fileSize() <= disk.wholeFileLimitBytes()) {
                planned += f.fileSize();
                disk.expectWholeCopy(f.path());
            }
        }
        thread.start();
    }

    /**
     * The files to copy whole, in order: without a hint, all of {@link #files}; with one, while
     * every file fits whole, all of them too, those the hint names first; otherwise those it names
     * whole.
     */
    private List<FileMeta> wholeCandidates() {
        if (hint.isEmpty()) {
            return files;
        }
        if (!byHint) {
            Set<FileMeta> ordered = new LinkedHashSet<>(hinted(e -> true));
            ordered.addAll(files);
            return new ArrayList<>(ordered);
        }
        return hinted(CacheHint.Entry::whole);
    }

    /** The files of the hint's entries that {@code which} accepts, in its order. */
    private List<FileMeta> hinted(Predicate<CacheHint.Entry> which) {
        List<FileMeta> hinted = new ArrayList<>();
        for (CacheHint.Entry e : hint.entries()) {
            FileMeta f = which.test(e) ? byPath.get(e.file()) : null;
            if (f != null) {
                hinted.add(f);
            }
        }
        return hinted;
    }

    private void run() {
        long start = System.nanoTime();
        List<String> copiedWhole = new ArrayList<>();
        // bytes of whole copies once the block fill starts (the rest of bytesDone is the fill's)
        long wholeBytes = -1;
        long hintedBytes = 0;
        try {
            openFiles();
            List<FileMeta> notWhole = copyWhole(wholeCandidates, copiedWhole);
            wholeBytes = bytesDone.get();
            // the fills stop once anything else evicts: the whole copies above may have evicted
            long evictions = disk.evictionCount();
            if (!byHint) {
                fillWithBlocks(notWhole, copiedWhole, false, evictions);
            } else {
                // a file named whole but not copied whole is filled with all its blocks here; the
                // memory tier's blocks are loaded there on the way
                memoryLimit = memoryRoom.getAsLong();
                boolean on = fillWithBlocks(hinted(e -> true), copiedWhole, true, evictions);
                hintedBytes = bytesDone.get() - wholeBytes;
                fillMemory(); // those of files the disk fill did not reach
                if (on) {
                    fillWithBlocks(files, copiedWhole, false, evictions); // the rest, by level
                }
            }
            state = cancelled ? State.CANCELLED : State.DONE;
        } catch (RuntimeException e) {
            state = State.FAILED;
            LOG.warn("Warm-up failed; reads fall back to the primary file system", e);
        } finally {
            for (FileMeta f : files) {
                disk.stopExpectingWholeCopy(f.path());
            }
            hint = CacheHint.EMPTY;
            hintByPath.clear();
        }
        LOG.info(
                "Warm-up {}: {} bytes loaded into memory, {} files, {} bytes copied to local disk"
                        + " in {} ms ({} bytes of them as blocks, {}; that fill ended: {})",
                state.name().toLowerCase(java.util.Locale.ROOT),
                memoryBytesDone.get(),
                filesDone.get(),
                bytesDone.get(),
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start),
                wholeBytes < 0 ? 0 : bytesDone.get() - wholeBytes,
                !byHint
                        ? "of files with no room as a whole"
                        : hintedBytes + " of those first as the snapshot's cache hint named them",
                fillEnd);
    }

    /**
     * After the hinted disk fill, which loads the blocks the hint marks as the memory tier's on its
     * way ({@link CacheHint.Entry#memoryOffsets}), loads those it did not reach (it ended when the
     * disk tier was full) into the memory tier: file by file in the hint's order, only blocks
     * neither tier holds, in reads of their own. Both stay within {@link #memoryLimit}, the room
     * {@link #memoryRoom} reported free when the hinted fill began, and within what the memory has
     * free at each block (blocks, metadata and rows of every store on the memory counted): they
     * evict nothing, as the disk fills do not, so warm-ups of stores sharing the memory and the
     * job's reads meanwhile do not lose blocks to them. These are the hottest blocks; put on disk
     * instead, those only the memory tier held would take the room of as many of the disk tier's.
     * Only files the open phase opened are loaded (an open here could evict). A file that cannot be
     * read is skipped with one log line.
     */
    private void fillMemory() {
        long limit = memoryLimit;
        for (CacheHint.Entry e : hint.entries()) {
            long loaded = memoryBytesDone.get();
            if (cancelled || loaded >= limit) {
                return;
            }
            String path = e.file();
            SstReader reader = byPath.containsKey(path) ? readers.getIfOpen(path) : null;
            if (e.memoryOffsets().length == 0 || reader == null || !live.test(path)) {
                continue;
            }
            SstReader.BlockFill fill;
            try {
                fill =
                        reader.fillMemoryWithBlocks(
                                () -> cancelled || !live.test(path),
                                pacing,
                                e.memoryOffsets(),
                                limit - loaded);
            } catch (IOException ex) {
                if (cancelIfInterrupted(ex)) {
                    return;
                }
                LOG.info("Warm-up skips the memory tier's blocks of {}: {}", path, ex.getMessage());
                continue;
            } finally {
                forgetIfDropped(path);
            }
            memoryBytesDone.addAndGet(fill.memoryBytes());
            if (fill.end() == SstReader.BlockFill.End.FULL) {
                return;
            }
            // NOT_TAKEN (the reader was released meanwhile) or STOPPED (dropped): the next file
        }
    }

    /**
     * Copies {@code candidates} whole, in order, while the tier admits them; returns those it did
     * not copy (in the same order) and adds the paths of those it did to {@code copiedWhole}.
     */
    private List<FileMeta> copyWhole(List<FileMeta> candidates, List<String> copiedWhole) {
        List<FileMeta> notWhole = new ArrayList<>();
        for (FileMeta f : candidates) {
            if (cancelled) {
                break;
            }
            if (!live.test(f.path()) || !disk.admitsWholeFile(f.path(), f.fileSize())) {
                // dropped, or no room for it as a whole: do not open it only to find that out
                disk.stopExpectingWholeCopy(f.path());
                notWhole.add(f);
                continue;
            }
            long copied;
            try {
                copied = readers.get(f.path(), f.fileSize()).copyToDisk(() -> cancelled, pacing);
            } catch (IOException e) {
                if (cancelIfInterrupted(e)) {
                    break;
                }
                LOG.info("Warm-up skips {}: {}", f.path(), e.getMessage());
                continue;
            } finally {
                disk.stopExpectingWholeCopy(f.path());
                forgetIfDropped(f.path());
            }
            if (copied > 0) {
                bytesDone.addAndGet(copied);
                filesDone.incrementAndGet();
                copiedWhole.add(f.path());
            } else if (!cancelled && !disk.holdsWholeFile(f.path())) {
                // not admitted, or its copy not kept (other copies took the room meanwhile)
                notWhole.add(f);
            }
        }
        return notWhole;
    }

    /**
     * A block fill: {@code fillFiles} in order (without the hint deciding, the files passed over as
     * wholes; with it, first the files it names, then all by level) cached block by block into the
     * disk tier's free room until it is used up. Below a budget of the whole state, whole files
     * keep to half the tier, and without this the other half filled only as gets missed, one round
     * trip per block (a ramp of tens of seconds at 2 ms a block). Evicts nothing, and stops once
     * anything else evicts (the job's reads or writes need room: from then on the fill would take
     * room that evictions freed). Only files the first phase opened (or a read opened since) are
     * filled: opening one here would cache its metadata tail with an ordinary offer, which may
     * evict, and would pin metadata beyond the share {@link #openFiles} keeps to. The fill's blocks
     * are only a guess, so after each file the whole copies ({@code copiedWhole}, L0 first) are
     * made more recent than them again, so that later evictions take the guessed blocks before the
     * copies (one during a file's fill may still take a copy; the fill then stops).
     *
     * @param fillFiles the files to fill, in order
     * @param hinted whether to fill only the blocks the hint names of each file (all of them for
     *     one it names whole), else all blocks
     * @param evictionsBefore the tier's eviction count when the fills began
     * @return whether it went through all files (false: the tier is full, anything else evicted, or
     *     the warm-up was cancelled)
     */
    private boolean fillWithBlocks(
            List<FileMeta> fillFiles,
            List<String> copiedWhole,
            boolean hinted,
            long evictionsBefore) {
        if (fillEnd.equals("not started")) {
            fillEnd = "no open file to fill";
        }
        for (FileMeta f : fillFiles) {
            if (cancelled) {
                fillEnd = "cancelled";
                return false;
            }
            if (disk.freeRoomBytes() <= 0) {
                fillEnd = "full";
                return false;
            }
            SstReader reader = readers.getIfOpen(f.path());
            if (reader == null || !live.test(f.path())) {
                continue;
            }
            CacheHint.Entry entry = hintByPath.get(f.path());
            if (hinted && entry == null) {
                continue;
            }
            long[] offsets = !hinted || entry.whole() ? null : entry.offsets();
            // the hinted fill loads the memory tier's blocks on its way; the blocks only the memory
            // tier held stay out of every fill while it holds them
            SstReader.MemoryPart memory =
                    entry == null
                            ? null
                            : new SstReader.MemoryPart(
                                    hinted ? entry.memoryOffsets() : new long[0],
                                    entry.memoryOnlyOffsets(),
                                    memoryLimit - memoryBytesDone.get());
            SstReader.BlockFill fill;
            try {
                fill =
                        reader.fillDiskWithBlocks(
                                () ->
                                        cancelled
                                                || disk.evictionCount() != evictionsBefore
                                                || !live.test(f.path()),
                                pacing,
                                offsets,
                                memory);
            } catch (IOException e) {
                if (cancelIfInterrupted(e)) {
                    fillEnd = "cancelled";
                    return false;
                }
                LOG.info("Warm-up skips the blocks of {}: {}", f.path(), e.getMessage());
                continue;
            } finally {
                forgetIfDropped(f.path());
            }
            bytesDone.addAndGet(fill.bytes());
            memoryBytesDone.addAndGet(fill.memoryBytes());
            if (fill.bytes() > 0) {
                disk.touchWholeCopies(copiedWhole);
            }
            fillEnd = fill.end().name().toLowerCase(java.util.Locale.ROOT);
            if (fill.end() == SstReader.BlockFill.End.NOT_TAKEN) {
                if (Thread.currentThread().isInterrupted()) {
                    cancelled = true;
                }
                return false;
            }
            if (fill.end() == SstReader.BlockFill.End.FULL) {
                return false;
            }
            if (disk.evictionCount() != evictionsBefore) {
                fillEnd = "room taken by the job";
                return false;
            }
            // DONE, or STOPPED (the file was dropped; a cancel ends the loop at its top): next
        }
        return !cancelled;
    }

    /**
     * Whether {@code e} (or the thread's state) says this thread was interrupted; if so the warm-up
     * is cancelled: nothing else interrupts its thread, so it stops rather than skip on.
     */
    private boolean cancelIfInterrupted(IOException e) {
        if (Thread.currentThread().isInterrupted() || InFlight.causedByInterrupt(e)) {
            cancelled = true;
            Thread.currentThread().interrupt();
            return true;
        }
        return false;
    }

    /**
     * Opens the files of {@link #opens} on {@link #OPENERS}, at most {@value #OPENS_AT_ONCE} at a
     * time, and waits for the opens. A file that cannot be opened is left to the reads that need
     * it, which report the problem; a cancelled warm-up starts no further open and stops waiting
     * for those under way (an open stuck on the file system keeps its thread, not this one). Never
     * interrupts an open: a get waiting for the same file would receive the interruption as its own
     * failure.
     */
    private void openFiles() {
        List<FileMeta> toOpen = opens.files();
        if (toOpen.isEmpty()) {
            return;
        }
        AtomicInteger opened = new AtomicInteger();
        long start = System.nanoTime();
        Semaphore slots = new Semaphore(OPENS_AT_ONCE);
        for (int i = 0; i < toOpen.size(); i++) {
            FileMeta f = toOpen.get(i);
            int index = i;
            if (!acquireUnlessCancelled(slots, 1)) {
                return;
            }
            OPENERS.execute(
                    () -> {
                        try {
                            openOne(f, index, opened);
                        } finally {
                            slots.release();
                        }
                    });
        }
        if (!acquireUnlessCancelled(slots, OPENS_AT_ONCE)) { // every open ended
            return;
        }
        LOG.debug(
                "Warm-up opened {} of {} files in {} ms",
                opened.get(),
                toOpen.size(),
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
    }

    /**
     * Takes {@code permits} of {@code slots}; false if the warm-up was cancelled or interrupted
     * first.
     */
    private boolean acquireUnlessCancelled(Semaphore slots, int permits) {
        try {
            while (!cancelled) {
                if (slots.tryAcquire(permits, 100, TimeUnit.MILLISECONDS)) {
                    return true;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return false;
    }

    private void openOne(FileMeta f, int index, AtomicInteger opened) {
        if (cancelled || !live.test(f.path()) || !opens.mayOpen(index)) {
            return;
        }
        try {
            readers.get(f.path(), f.fileSize());
            opened.incrementAndGet();
        } catch (IOException | RuntimeException e) {
            LOG.info("Warm-up could not open {}: {}", f.path(), e.toString());
        } finally {
            forgetIfDropped(f.path());
        }
    }

    /**
     * After an open or a copy of {@code path}: if the store no longer lists the file in any
     * version, evicts its reader and forgets its local bytes. The store does both when a file
     * becomes obsolete, which may be before this open or copy published them; no version lists the
     * file from before that, so checking after publishing leaves neither behind whichever came
     * first.
     */
    private void forgetIfDropped(String path) {
        if (!inUse.test(path)) {
            readers.evict(path);
            disk.forget(path);
        }
    }

    /** Stops before the next chunk and waits (at most {@code waitMillis}) for the thread to end. */
    public void cancel(long waitMillis) {
        cancelled = true;
        if (pacing != null) {
            pacing.shutdown(); // a copy waiting for its rate goes on at once, and sees the cancel
        }
        try {
            thread.join(waitMillis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Waits for the warm-up to end; for tests and benchmarks. */
    public State await(long timeoutMillis) throws InterruptedException {
        thread.join(timeoutMillis);
        return state;
    }

    public State state() {
        return state;
    }

    public long bytesPlanned() {
        return bytesPlanned;
    }

    public long bytesDone() {
        return bytesDone.get();
    }

    public long filesDone() {
        return filesDone.get();
    }

    /**
     * Bytes of the blocks loaded into the memory tier (by the hinted disk fill on its way, and by
     * {@link #fillMemory}), as the memory tier weighs them.
     */
    public long memoryBytesDone() {
        return memoryBytesDone.get();
    }
}
