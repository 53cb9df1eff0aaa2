package io.github.flinkstate.disagg.engine.cache;

import java.io.Closeable;
import java.io.File;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;
import java.util.zip.CRC32C;
import javax.annotation.Nullable;
import javax.annotation.concurrent.GuardedBy;
import javax.annotation.concurrent.ThreadSafe;
import org.apache.flink.annotation.VisibleForTesting;
import org.apache.flink.util.FileUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The local disk tier under the in-memory {@link BlockCache}: copies of primary-file bytes on a
 * local directory, so that a block evicted from memory, or a file the store has just written, is
 * read from local disk instead of the (remote) primary file system.
 *
 * <p>Two granularities, one recency order:
 *
 * <ul>
 *   <li><b>Blocks</b> read from the primary file system are {@link #offer offered} after their
 *       checksum was verified and appended to the current {@link DiskSlab}. This covers restored
 *       and cold files: only the blocks actually read take space (and those a warm-up puts into the
 *       room whole files left, {@link #offerIntoFreeRoom}).
 *   <li><b>Whole files</b>: a file the store writes (flush, compaction) is copied locally while it
 *       is written ({@link #writeThrough}), because it is read soon after. Whole files are admitted
 *       only while they fill at most half of the capacity (all of it when all of the store's live
 *       files fit, see {@link #liveBytes}) and the disk has at least twice the free reserve; beyond
 *       that the store falls back to caching blocks (file-level caching while disk is plentiful,
 *       block-level when it is not).
 * </ul>
 *
 * Slabs and whole files are the units of eviction, kept in one least-recently-used order: every hit
 * (but a compaction's read of a data block of its inputs) makes its unit the most recent, and an
 * evicted slab's used blocks move to the newest slab ({@link #moveUsedBlocks}); the least recent
 * unit is deleted when the capacity or the free-space reserve of the directory's file system would
 * be exceeded. Data are served only after the reader verified them again (the stored bytes include
 * the file's own CRC32C); a copy that fails verification, is shorter than recorded or cannot be
 * read is {@link #invalidate dropped} and the caller reads the primary file instead. The tier also
 * checks its copies against what entered it, for the bytes no checksum of the SST format covers
 * (the trailer's version byte, which decides how everything else is decoded): every slab entry
 * against a CRC32C taken when it was offered, and the last bytes of a whole-file copy against those
 * written; a mismatch drops the unit. Local trouble (full disk, I/O errors) never fails a read or a
 * write of the store: it only costs cache hits.
 *
 * <p>Reads of a slab are positional reads (one system call each); a whole-file copy, which never
 * changes once committed, is read through a memory mapping when the cache maps whole files ({@link
 * ReadOnlyMapping}): a copy out of the OS's pages, without a system call, which is most of what a
 * get costs when the state is on local disk.
 *
 * <p>The tier is keyed by file path and offset, independently of open readers, so it survives
 * reader eviction. It does not survive the process: the directory is wiped on construction and on
 * {@link #close}, and marked in use with a file lock meanwhile, so that the directories of a
 * process that died can be found and deleted ({@link #deleteAbandonedDirectories}).
 *
 * <p>Thread safety: thread-safe. Index and recency order are guarded by this object; file reads and
 * appends run outside the lock (positional I/O on shared channels, or copies out of a whole file's
 * mapping); mapping a committed copy runs under it.
 *
 * <p>Invariants (checked by {@link #checkInvariants()}): {@code usedBytes} is the sum of the bytes
 * of the units in the recency order and of the space reserved by write-through copies still being
 * written ({@code reservedBytes}), and never exceeds the capacity; every index entry points into a
 * slab in the recency order, or is a used block of an evicted slab on its way to the newest one
 * ({@link #moveUsedBlocks}: that slab's file is deleted once its blocks moved, so meanwhile the
 * directory exceeds the capacity by the evicted slabs whose blocks are still moving); every
 * whole-file copy is in the recency order.
 */
@ThreadSafe
public final class DiskCache implements Closeable {

    private static final Logger LOG = LoggerFactory.getLogger(DiskCache.class);

    /**
     * The most bytes of used blocks one slab eviction moves ({@link #markLeaving}): the move runs
     * on the thread that evicts (a get's after its remote read, or a writer's or the warm-up's
     * whole copy), one local read and write per block.
     */
    static final int MOST_BYTES_MOVED = 1 << 20;

    /** Free space is checked again after this many bytes were appended. */
    private static final long SPACE_CHECK_BYTES = 4L << 20;

    /**
     * After a local write fails, nothing is written for this long (no retry storm, no log flood).
     */
    static final long WRITE_PAUSE_NANOS = 10_000_000_000L;

    /** A cached block: the byte range of {@code file} starting at {@code offset}. */
    record BlockKey(String file, long offset) {}

    /**
     * Where an offered block is, the CRC32C of its bytes as offered, and whether it was used since
     * it was stored there ({@link #used}, guarded by the cache's lock).
     */
    private static final class Location {
        final DiskSlab slab;
        final int position;
        final int length;
        final int crc;

        /**
         * Read from this slab since it was stored here (or since its slab was evicted, while it
         * moves): an eviction of the slab for the capacity moves it to the newest slab, within
         * {@link #MOST_BYTES_MOVED} ({@link #markLeaving}, {@link #moveUsedBlocks}).
         */
        boolean used;

        Location(DiskSlab slab, int position, int length, int crc) {
            this.slab = slab;
            this.position = position;
            this.length = length;
            this.crc = crc;
        }

        DiskSlab slab() {
            return slab;
        }

        int position() {
            return position;
        }

        int length() {
            return length;
        }

        int crc() {
            return crc;
        }
    }

    private final File directory;
    private final long capacityBytes;
    private final long minFreeBytes;
    private final int slabBytes;

    /** Whether whole-file copies were to be mapped (the option); see {@link #mapping}. */
    private final boolean mapWholeFiles;

    /** Whether an evicted slab's used blocks move to the newest slab ({@link #moveUsedBlocks}). */
    private final boolean keepUsedBlocks;

    /**
     * Whether new whole-file copies are mapped: {@link #mapWholeFiles} until the first mapped read
     * fault ({@link #mappingFault}) or the first mapping the system refused, false after.
     */
    private volatile boolean mapping;

    /** Whether a mapped read faulted ({@link #mappingFault} has run). Guarded by this. */
    @GuardedBy("this")
    private boolean faulted;

    private final CacheDirectoryLock inUse;

    private final LongAdder hits = new LongAdder();
    private final LongAdder misses = new LongAdder();
    private final LongAdder bytesWritten = new LongAdder();
    private final LongAdder evictions = new LongAdder();
    private final LongAdder invalidations = new LongAdder();
    private final LongAdder writeFailures = new LongAdder();
    private final LongAdder refusals = new LongAdder();
    private final LongAdder blocksKept = new LongAdder();

    @GuardedBy("this")
    private final LinkedHashMap<DiskUnit, Boolean> recency = new LinkedHashMap<>(16, 0.75f, true);

    @GuardedBy("this")
    private final Map<BlockKey, Location> index = new HashMap<>();

    @GuardedBy("this")
    private final Map<String, Set<Long>> offsetsByFile = new HashMap<>();

    @GuardedBy("this")
    private final Map<String, LocalFileCopy> wholeFiles = new HashMap<>();

    @GuardedBy("this")
    private DiskSlab active;

    /**
     * Evicted slabs whose used blocks are being moved to the newest slab: out of the recency order
     * and not counted in {@link #usedBytes}, but their leaving blocks stay in the index, pointing
     * into them, until each is moved or forgotten.
     */
    @GuardedBy("this")
    private final Set<DiskSlab> moving = new HashSet<>();

    @GuardedBy("this")
    private long usedBytes;

    /**
     * Space taken by the temp files of write-through copies being written (see {@link #reserve}).
     */
    @GuardedBy("this")
    private long reservedBytes;

    @GuardedBy("this")
    private long wholeFileBytes;

    /** Files a warm-up will copy whole: their blocks are not cached meanwhile. */
    @GuardedBy("this")
    private final Set<String> wholeCopyExpected = new HashSet<>();

    /** Files being rewritten by a compaction: their whole copies are evicted before anything. */
    @GuardedBy("this")
    private final Set<String> evictFirst = new HashSet<>();

    /** Total size of the served store's live files; unknown (max) until {@link #liveBytes}. */
    @GuardedBy("this")
    private long liveBytes = Long.MAX_VALUE;

    @GuardedBy("this")
    private long appendedSinceSpaceCheck = SPACE_CHECK_BYTES;

    @GuardedBy("this")
    private long nextFileId;

    @GuardedBy("this")
    private boolean closed;

    /** Runs before each block {@link #moveUsedBlocks} moves; tests pause moves with it. */
    @VisibleForTesting volatile Runnable beforeMove = () -> {};

    /** Local writes are paused until this System.nanoTime() after a failure. */
    private volatile long writesPausedUntil = System.nanoTime();

    /**
     * A cache that maps its whole-file copies; see {@link #DiskCache(File, long, long, boolean)}.
     */
    public DiskCache(File directory, long capacityBytes, long minFreeBytes) throws IOException {
        this(directory, capacityBytes, minFreeBytes, true);
    }

    /**
     * @param directory a directory only this cache uses; wiped now and on close
     * @param capacityBytes the most bytes of local files the cache keeps
     * @param minFreeBytes free space the cache leaves on the directory's file system: it evicts, or
     *     stops caching, rather than go below it
     * @param mapWholeFiles whether whole-file copies are read through a memory mapping ({@link
     *     ReadOnlyMapping}) rather than with one system call per read
     */
    public DiskCache(File directory, long capacityBytes, long minFreeBytes, boolean mapWholeFiles)
            throws IOException {
        this(directory, capacityBytes, minFreeBytes, mapWholeFiles, true);
    }

    /**
     * As {@link #DiskCache(File, long, long, boolean)}.
     *
     * @param keepUsedBlocks whether the blocks of an evicted slab that were used since they were
     *     stored move to the newest slab (up to half the slab and {@link #MOST_BYTES_MOVED} per
     *     evicted slab) instead of leaving with it ({@link #moveUsedBlocks})
     */
    public DiskCache(
            File directory,
            long capacityBytes,
            long minFreeBytes,
            boolean mapWholeFiles,
            boolean keepUsedBlocks)
            throws IOException {
        if (capacityBytes <= 0 || minFreeBytes < 0) {
            throw new IllegalArgumentException(
                    "disk cache capacity must be > 0 and the free reserve >= 0, were "
                            + capacityBytes
                            + " and "
                            + minFreeBytes);
        }
        this.directory = directory;
        this.capacityBytes = capacityBytes;
        this.minFreeBytes = minFreeBytes;
        this.mapWholeFiles = mapWholeFiles;
        this.mapping = mapWholeFiles;
        this.keepUsedBlocks = keepUsedBlocks;
        this.slabBytes =
                (int)
                        Math.max(
                                Math.min(capacityBytes / 16, 64L << 20),
                                Math.min(256L << 10, capacityBytes));
        Files.createDirectories(directory.toPath());
        // locked before anything is wiped: a directory a live cache holds is refused, not emptied
        this.inUse = CacheDirectoryLock.acquire(directory);
        try {
            deleteContentsExcept(directory, CacheDirectoryLock.LOCK_FILE);
        } catch (IOException | RuntimeException e) {
            inUse.release();
            throw e;
        }
        LOG.info(
                "Local disk cache in {}: capacity {} bytes, free-space reserve {} bytes, slabs of {}"
                        + " bytes, whole files {}",
                directory,
                capacityBytes,
                minFreeBytes,
                slabBytes,
                mapWholeFiles ? "memory-mapped" : "read with system calls");
    }

    private static void deleteContentsExcept(File directory, String keep) throws IOException {
        File[] children = directory.listFiles();
        if (children == null) {
            throw new IOException("cannot list the local cache directory " + directory);
        }
        for (File child : children) {
            if (!child.getName().equals(keep)) {
                FileUtils.deleteFileOrDirectory(child);
            }
        }
    }

    /**
     * Deletes the cache directories under {@code parent} that no running cache holds (left behind
     * by a process that died), so that crashes do not accumulate local copies; directories without
     * a lock file are left alone for an hour (one may be being created). Returns how many were
     * deleted.
     */
    public static int deleteAbandonedDirectories(File parent) {
        return CacheDirectoryLock.deleteAbandoned(parent, 3_600_000L);
    }

    /**
     * The bytes {@code [offset, offset + length)} of {@code file} if cached (in a whole-file copy,
     * or in a block offered at {@code offset} with at least {@code length} bytes), else null. The
     * caller must verify them and {@link #invalidate} the entry if they are wrong.
     */
    public byte[] read(String file, long offset, int length) {
        return read(file, offset, length, true);
    }

    /**
     * As {@link #read(String, long, int)}; without {@code use} (a compaction reading files it is
     * about to replace) the read neither makes its unit recent nor marks its block used.
     */
    public byte[] read(String file, long offset, int length, boolean use) {
        if (Thread.currentThread().isInterrupted()) {
            // its channel read would close the unit's channel for every thread: a miss instead
            misses.increment();
            return null;
        }
        DiskUnit unit;
        long position;
        LocalFileCopy copy;
        Location at = null;
        synchronized (this) {
            copy = closed ? null : wholeFiles.get(file);
            if (copy == null && !closed) {
                at = index.get(new BlockKey(file, offset));
            }
            if (copy != null && offset >= 0 && offset + length <= copy.bytes) {
                if (use) {
                    recency.get(copy);
                }
                unit = copy;
                position = offset;
            } else if (at != null && at.length() >= length) {
                // a longer copy from the same offset holds these bytes first: a small file's tail
                // read from offset 0 (the whole file) serves its first block too
                copy = null;
                if (use) {
                    useBlock(at);
                }
                unit = at.slab();
                position = at.position();
            } else {
                misses.increment();
                return null;
            }
        }
        try {
            byte[] data;
            String wrong = null;
            if (copy != null) {
                data = unit.read(position, length);
                if (!copy.endMatches(position, data)) {
                    wrong = "its last bytes differ from those written";
                }
            } else {
                // the whole block as offered, checked against its checksum, then the part asked
                byte[] all = unit.read(position, at.length());
                data = all.length == length ? all : Arrays.copyOf(all, length);
                if (crc32c(all) != at.crc()) {
                    wrong = "CRC32C mismatch";
                }
            }
            if (wrong != null) {
                if (!unit.isDropped()) {
                    LOG.warn(
                            "Dropping local cache file {} (the copy of {} at {}: {}); reading the"
                                    + " primary file instead",
                            unit.file,
                            file,
                            offset,
                            wrong);
                    dropUnit(unit);
                    invalidations.increment();
                }
                misses.increment();
                return null;
            }
            hits.increment();
            return data;
        } catch (ClosedChannelException e) {
            // dropped meanwhile, or this thread was interrupted (the unit is fine): a miss
            misses.increment();
            return null;
        } catch (InternalError e) {
            absorbMappedFault(this, e); // a mapped page the OS could not supply
            return missAfterFailedRead(
                    unit,
                    file,
                    offset,
                    "a mapped page could not be read (the file truncated, or a disk error): " + e);
        } catch (IOException e) {
            return missAfterFailedRead(unit, file, offset, e.toString());
        }
    }

    /** Drops {@code unit}, whose read of {@code file} at {@code offset} failed; counts a miss. */
    private byte[] missAfterFailedRead(DiskUnit unit, String file, long offset, String why) {
        if (!unit.isDropped()) {
            LOG.warn(
                    "Dropping local cache file {} (read of {} at {} failed: {}); reading the"
                            + " primary file instead",
                    unit.file,
                    file,
                    offset,
                    why);
            dropUnit(unit);
            invalidations.increment();
        }
        misses.increment();
        return null;
    }

    /**
     * After a read of a mapped copy faulted ({@code fault}, the JVM's {@link InternalError} for a
     * page the OS could not supply: a disk error, or a file truncated behind the cache's back):
     * maps no more copies and reads the mapped ones with system calls from now on, where such a
     * failure is an {@link IOException} that drops only its unit. The JVM may report the fault
     * after the read returned, so the caller that catches it may not know which copy it was; the
     * copy itself is dropped when its next read fails, or when its bytes fail verification.
     * Idempotent.
     */
    public void mappingFault(InternalError fault) {
        List<LocalFileCopy> copies;
        boolean first;
        synchronized (this) {
            first = !faulted;
            faulted = true;
            mapping = false;
            copies = new ArrayList<>(wholeFiles.values());
        }
        if (first) {
            LOG.warn(
                    "A memory-mapped local cache file could not be read; local copies in {} are"
                            + " read with system calls from now on",
                    directory,
                    fault);
        }
        copies.forEach(LocalFileCopy::unmap); // idempotent: copies mapped before are unmapped too
    }

    /**
     * Handles {@code e}, caught around a read that may have used a mapped copy of {@code disk}, as
     * a mapped-page fault ({@link #mappingFault}) if it is one: the cache maps whole files and the
     * JVM's message names an unsafe memory access (HotSpot's words for such a fault, reported late
     * or not). Any other error, or any error without such a cache, is rethrown.
     */
    public static void absorbMappedFault(@Nullable DiskCache disk, InternalError e) {
        String message = e.getMessage();
        if (disk == null
                || !disk.mapWholeFiles
                || message == null
                || !message.contains("unsafe memory access")) {
            throw e;
        }
        disk.mappingFault(e);
    }

    /**
     * Makes the unit holding {@code file} at {@code offset}, if any, the most recently used; called
     * when the memory tier evicts that block (no hit is counted). Never calls back into the memory
     * tier.
     */
    public synchronized void touch(String file, long offset) {
        LocalFileCopy copy = wholeFiles.get(file);
        if (copy != null) {
            recency.get(copy);
            return;
        }
        Location at = index.get(new BlockKey(file, offset));
        if (at != null) {
            // promoted, not marked used: the memory tier evicts every block it loaded, hit there
            // or not, so being evicted from it says nothing about heat
            recency.get(at.slab());
        }
    }

    /**
     * Caches {@code data}, the verified bytes of {@code file} at {@code offset} just read from the
     * primary file system. Best effort: does nothing if it is cached already, does not fit, or the
     * local disk fails.
     */
    public void offer(String file, long offset, byte[] data) {
        store(file, offset, data, true, null);
    }

    /**
     * As {@link #offer}, but only into room the cache has free: evicts nothing for the block, for
     * neither the capacity nor the free-space reserve of the disk. For a warm-up that fills the
     * rest of the cache with blocks, which must not push out what is cached already.
     */
    public FreeRoomOffer offerIntoFreeRoom(String file, long offset, byte[] data) {
        return store(file, offset, data, false, null);
    }

    /** What became of a block {@link #offerIntoFreeRoom offered into the free room}. */
    public enum FreeRoomOffer {
        /** Cached now. */
        STORED,
        /** Cached already, as a block or within a whole-file copy. */
        HELD,
        /** Not cached: the free room is used up (capacity or free-space reserve). */
        NO_ROOM,
        /**
         * Not cached for another reason: larger than {@link #largestBlockBytes}, a whole copy of
         * the file on its way, its slab dropped meanwhile, the calling thread interrupted, or the
         * cache takes no writes now (closed, writes paused after a local failure: {@link
         * #takesWrites} false).
         */
        NOT_TAKEN
    }

    /**
     * Whether blocks may be stored now: not closed, and writes not paused after a local failure. A
     * block {@link FreeRoomOffer#NOT_TAKEN not taken} while this holds, by a thread that is not
     * interrupted, was turned away for a reason of its own: too large, its slab dropped meanwhile,
     * or a whole copy of its file on its way ({@link #holdsOrExpectsWholeCopy}).
     */
    public boolean takesWrites() {
        synchronized (this) {
            if (closed) {
                return false;
            }
        }
        return !writesPaused();
    }

    /**
     * Makes the whole-file copies of {@code files} the most recently used units, the first of them
     * most recent of all (no hit counted; files without a whole copy are passed over, their blocks
     * not touched).
     */
    public synchronized void touchWholeCopies(List<String> files) {
        for (int i = files.size() - 1; i >= 0; i--) {
            LocalFileCopy copy = wholeFiles.get(files.get(i));
            if (copy != null) {
                recency.get(copy);
            }
        }
    }

    /**
     * Bytes the capacity still leaves free, which may be filled without evicting unless the
     * free-space reserve of the disk allows less (0 once closed).
     */
    public synchronized long freeRoomBytes() {
        return closed ? 0 : capacityBytes - usedBytes;
    }

    /** The largest block the cache stores (a slab's size); larger ones are never cached. */
    public int largestBlockBytes() {
        return slabBytes;
    }

    /**
     * Appends {@code data} to the current slab; with {@code evict}, evicts least recently used
     * units to make room, else takes free room only. With {@code replacing}, the block moves from
     * an evicted slab ({@link #moveUsedBlocks}): it is stored only while the index still points at
     * {@code replacing}, and its new location then takes that one's place.
     */
    private FreeRoomOffer store(
            String file, long offset, byte[] data, boolean evict, @Nullable Location replacing) {
        int length = data.length;
        if (length > slabBytes || writesPaused() || Thread.currentThread().isInterrupted()) {
            // (an interrupted thread's write would close the slab's channel for all)
            return FreeRoomOffer.NOT_TAKEN;
        }
        BlockKey key = new BlockKey(file, offset);
        List<DiskUnit> victims = new ArrayList<>();
        DiskSlab slab = null;
        int position = -1;
        FreeRoomOffer refused = null;
        synchronized (this) {
            if (closed || wholeCopyExpected.contains(file)) {
                return FreeRoomOffer.NOT_TAKEN;
            }
            Location held = index.get(key);
            if (replacing != null && held != replacing) {
                return FreeRoomOffer.NOT_TAKEN; // its file forgotten meanwhile
            }
            if ((held != null && held != replacing) || wholeFiles.containsKey(file)) {
                return FreeRoomOffer.HELD;
            }
            if (!makeRoom(length, victims, evict)) {
                if (evict) {
                    refusals.increment(); // (a warm-up's block finding no free room is none)
                }
                refused = FreeRoomOffer.NO_ROOM;
            } else {
                position = active == null ? -1 : active.allocate(length);
                if (position < 0) {
                    try {
                        active = new DiskSlab(newFile("slab-", ".blk"), slabBytes);
                        recency.put(active, Boolean.TRUE);
                        position = active.allocate(length);
                    } catch (IOException e) {
                        active = null;
                        recordWriteFailure();
                        LOG.warn(
                                "Cannot create a slab in the local cache {}: {}",
                                directory,
                                e.toString());
                        refused = FreeRoomOffer.NOT_TAKEN;
                    }
                }
                if (refused == null) {
                    usedBytes += length;
                    slab = active;
                }
            }
        }
        dropVictims(victims); // (outside the lock: it may move blocks, which reads and writes)
        if (refused != null) {
            return refused;
        }
        if (Thread.currentThread().isInterrupted()) {
            // interrupted during the moves: its write would close the slab's channel for all
            return FreeRoomOffer.NOT_TAKEN;
        }
        try {
            slab.write(position, data);
        } catch (ClosedChannelException e) {
            // dropped meanwhile, or this thread was interrupted: not a disk failure
            return FreeRoomOffer.NOT_TAKEN;
        } catch (IOException e) {
            if (!slab.isDropped()) {
                recordWriteFailure();
                LOG.warn(
                        "Write to local cache file {} failed ({}); dropping it",
                        slab.file,
                        e.toString());
                dropUnit(slab);
            }
            return FreeRoomOffer.NOT_TAKEN;
        }
        bytesWritten.add(length);
        synchronized (this) {
            if (slab.isDropped()
                    || !recency.containsKey(slab)
                    || (replacing != null && index.get(key) != replacing)) {
                return FreeRoomOffer.NOT_TAKEN; // (a moved block's file forgotten meanwhile)
            }
            Location stored = new Location(slab, position, length, crc32c(data));
            stored.used = replacing != null && replacing.used; // read while it moved
            index.put(key, stored);
            slab.keys.add(key);
            offsetsByFile.computeIfAbsent(file, f -> new HashSet<>()).add(offset);
        }
        return FreeRoomOffer.STORED;
    }

    /**
     * Drops the cached copy holding {@code file} at {@code offset} because its bytes failed
     * verification ({@code reason}); the whole unit goes, as its storage cannot be trusted.
     */
    public void invalidate(String file, long offset, String reason) {
        DiskUnit unit;
        synchronized (this) {
            unit = wholeFiles.get(file);
            if (unit == null) {
                Location at = index.get(new BlockKey(file, offset));
                unit = at == null ? null : at.slab();
            }
        }
        if (unit != null && !unit.isDropped()) {
            LOG.warn(
                    "Dropping local cache file {}: its copy of {} at offset {} is corrupt ({});"
                            + " reading the primary file instead",
                    unit.file,
                    file,
                    offset,
                    reason);
            invalidations.increment();
            dropUnit(unit);
        }
    }

    /**
     * A local copy to write alongside a new primary file, or null if whole files are not admitted
     * now (too much of the capacity in whole files already, or too little free disk).
     */
    public WriteThrough writeThrough(String file) {
        return writeThrough(file, 0);
    }

    /**
     * As {@link #writeThrough(String)}, for a file of known length: null also if that many more
     * bytes of whole files would exceed {@link #wholeFileLimitBytes()}.
     */
    public WriteThrough writeThrough(String file, long expectedLength) {
        File temp;
        if (writesPaused()) {
            return null;
        }
        synchronized (this) {
            if (closed
                    || wholeFiles.containsKey(file)
                    || !roomForWholeFile(expectedLength)
                    || directory.getUsableSpace() < 2 * minFreeBytes) {
                return null;
            }
            temp = newFile("write-", ".tmp");
        }
        try {
            return new WriteThrough(this, file, temp, expectedLength);
        } catch (IOException e) {
            recordWriteFailure();
            LOG.warn("Cannot start a local copy of {} in {}: {}", file, directory, e.toString());
            return null;
        }
    }

    /**
     * Tells the cache the total size of the live files of the store it serves (the store calls it
     * on every change of its file set). While they all fit in the capacity, whole files may fill
     * all of it: every live file can then be cached whole and nothing needs the block granularity
     * (a compaction's outputs, written before its inputs are dropped, evict the least recently used
     * copies). Otherwise whole files keep to half the capacity so that blocks of the other files
     * find room.
     */
    public synchronized void liveBytes(long bytes) {
        liveBytes = bytes;
    }

    /**
     * The store is rewriting {@code files} (a compaction's inputs): while it does, their whole-file
     * copies are the first units evicted when room is needed, so that the compaction's outputs,
     * copied locally as they are written, replace its inputs instead of evicting files that stay
     * live (in a cache that holds the whole state, the least recently used unit is some other live
     * file, whose reads would then go remote). Their bytes do not count against the whole-file
     * limit meanwhile, so the outputs are admitted as whole files. Reads of an evicted input go to
     * the primary file.
     */
    public synchronized void evictFirst(Collection<String> files) {
        evictFirst.addAll(files);
    }

    /**
     * A whole copy of {@code file} is on its way (a warm-up will copy it): until {@link
     * #stopExpectingWholeCopy}, its blocks are not {@link #offer offered} into slabs, so that they
     * do not take the room the copy needs.
     */
    public synchronized void expectWholeCopy(String file) {
        wholeCopyExpected.add(file);
    }

    /** Whether a whole copy of {@code file} is held, or on its way ({@link #expectWholeCopy}). */
    public synchronized boolean holdsOrExpectsWholeCopy(String file) {
        return wholeFiles.containsKey(file) || wholeCopyExpected.contains(file);
    }

    /** Ends {@link #expectWholeCopy} for {@code file} (copied, skipped or cancelled). */
    public synchronized void stopExpectingWholeCopy(String file) {
        wholeCopyExpected.remove(file);
    }

    /** Bytes of whole-file copies, not counting those of files being rewritten. */
    @GuardedBy("this")
    private long wholeBytesStaying() {
        long leaving = 0;
        for (String file : evictFirst) {
            LocalFileCopy copy = wholeFiles.get(file);
            leaving += copy == null ? 0 : copy.bytes;
        }
        return wholeFileBytes - leaving;
    }

    /** Ends {@link #evictFirst} for {@code files}. */
    public synchronized void stopEvictingFirst(Collection<String> files) {
        evictFirst.removeAll(files);
    }

    /** How many bytes whole-file copies may fill now (see {@link #liveBytes}). */
    public synchronized long wholeFileLimitBytes() {
        return liveBytes <= capacityBytes ? capacityBytes : capacityBytes / 2;
    }

    /**
     * Whether {@link #writeThrough(String, long)} would now take a whole copy of {@code file} of
     * {@code length} bytes, or one is held already (ignoring free disk space, which the copy itself
     * checks).
     */
    public synchronized boolean admitsWholeFile(String file, long length) {
        return !closed && (wholeFiles.containsKey(file) || roomForWholeFile(length));
    }

    /** Whether whole files stay within their limit with {@code length} more bytes of them. */
    @GuardedBy("this")
    private boolean roomForWholeFile(long length) {
        return wholeBytesStaying() + Math.max(1, length) <= wholeFileLimitBytes();
    }

    /** Whether {@code file}'s block at {@code offset} is cached, as a block or in a whole copy. */
    public synchronized boolean holdsBlock(String file, long offset) {
        return wholeFiles.containsKey(file) || index.containsKey(new BlockKey(file, offset));
    }

    /** Whether a whole-file copy of {@code file} is held (no recency change, no hit counted). */
    public synchronized boolean holdsWholeFile(String file) {
        return wholeFiles.containsKey(file);
    }

    /**
     * Enters a complete local copy of {@code file} ({@code length} bytes) as a cache unit; false if
     * it was not kept (no room, closed, already held, local failure).
     */
    boolean commit(WriteThrough from, String file, File temp, long length, byte[] end) {
        List<DiskUnit> victims = new ArrayList<>();
        try {
            synchronized (this) {
                // the reservation becomes the entry: its bytes are on disk already, so only
                // what it does not cover needs room (and the free-space check)
                long reserved = from.takeReservation();
                unreserve(reserved);
                if (refusesWholeCopy(file, length)
                        || !makeRoom(Math.max(0, length - reserved), victims)) {
                    refusals.increment();
                    Files.deleteIfExists(temp.toPath());
                    return false;
                }
                File target = newFile("file-", ".sst");
                LocalFileCopy copy;
                try {
                    Files.move(temp.toPath(), target.toPath(), StandardCopyOption.ATOMIC_MOVE);
                    copy = new LocalFileCopy(target, file, length, end, mapping);
                } catch (IOException e) {
                    // moved but not opened (out of file handles): not an entry, so not counted
                    // and never evicted; it must not stay on disk
                    deleteQuietly(target, e);
                    throw e;
                }
                if (copy.mappingFailure != null) {
                    // the JDK ran a full GC and waited before it failed: not again per copy
                    mapping = false;
                    LOG.warn(
                            "Cannot map the local copy of {} ({}); local copies in {} are read"
                                    + " with system calls from now on",
                            file,
                            copy.mappingFailure.toString(),
                            directory);
                }
                recency.put(copy, Boolean.TRUE);
                wholeFiles.put(file, copy);
                usedBytes += length;
                wholeFileBytes += length;
            }
            bytesWritten.add(length);
            return true;
        } catch (IOException e) {
            recordWriteFailure();
            LOG.warn("Cannot keep the local copy of {}: {}", file, e.toString());
            from.abort();
            return false;
        } finally {
            dropVictims(victims);
        }
    }

    private static void deleteQuietly(File f, IOException cause) {
        try {
            Files.deleteIfExists(f.toPath());
        } catch (IOException e) {
            cause.addSuppressed(e);
        }
    }

    /**
     * Reserves {@code bytes} more for the temp file of a write-through copy of {@code file} that
     * has grown to {@code total} bytes, evicting least recently used units to make room: a copy
     * takes its space while it is written, not only when it is committed. False (and nothing
     * reserved or evicted) if the cache is closed, holds the file already, or would refuse a whole
     * file of {@code total} bytes at commit; false also if the bytes cannot fit. The copy is then
     * abandoned. A copy of unknown length that the whole-file limit refuses only when it has grown
     * has evicted, at most, for the steps it reserved while it still fitted.
     */
    boolean reserve(String file, long total, long bytes) {
        List<DiskUnit> victims = new ArrayList<>();
        try {
            synchronized (this) {
                if (refusesWholeCopy(file, total) || !makeRoom(bytes, victims)) {
                    refusals.increment();
                    return false;
                }
                usedBytes += bytes;
                reservedBytes += bytes;
                return true;
            }
        } finally {
            dropVictims(victims);
        }
    }

    /**
     * Whether a whole copy of {@code file} of {@code length} bytes is refused now: the cache is
     * closed, holds one already, or whole files would pass their limit.
     */
    @GuardedBy("this")
    private boolean refusesWholeCopy(String file, long length) {
        return closed
                || wholeFiles.containsKey(file)
                || wholeBytesStaying() + length > wholeFileLimitBytes();
    }

    /** Gives back space {@link #reserve reserved} by a copy that was committed or abandoned. */
    synchronized void unreserve(long bytes) {
        if (closed || bytes == 0) {
            return; // a close resets the accounting
        }
        usedBytes -= bytes;
        reservedBytes -= bytes;
    }

    /** {@code file} is no longer read by anyone: forgets its cached bytes. */
    public void forget(String file) {
        DiskUnit whole = null;
        synchronized (this) {
            LocalFileCopy copy = wholeFiles.get(file);
            if (copy != null) {
                removeUnit(copy);
                whole = copy;
            }
            Set<Long> offsets = offsetsByFile.remove(file);
            if (offsets != null) {
                for (long offset : offsets) {
                    index.remove(new BlockKey(file, offset));
                }
            }
        }
        if (whole != null) {
            whole.drop();
        }
    }

    /**
     * Evicts least recently used units (the slab being filled last) until {@code length} more bytes
     * fit in the capacity and, when it is time to check, in the free-space reserve. Returns false
     * if they cannot fit. The victims are removed from the index here and deleted by the caller
     * after it releases the lock.
     */
    @GuardedBy("this")
    private boolean makeRoom(long length, List<DiskUnit> victims) {
        return makeRoom(length, victims, true);
    }

    /** As {@link #makeRoom(long, List)}; without {@code evict}, false where it would evict. */
    @GuardedBy("this")
    private boolean makeRoom(long length, List<DiskUnit> victims, boolean evict) {
        if (length > capacityBytes) {
            return false;
        }
        // evicts for the bytes asked only: an evicted slab's used blocks move into what is left
        // (a slab frees at least twice what it moves), so nothing more recent goes for them
        while (usedBytes + length > capacityBytes) {
            if (!evict || !evictOne(victims, true)) {
                return false;
            }
        }
        appendedSinceSpaceCheck += length;
        if (appendedSinceSpaceCheck >= SPACE_CHECK_BYTES) {
            appendedSinceSpaceCheck = 0;
            long freed = 0;
            for (DiskUnit v : victims) {
                freed += v.bytes;
            }
            long usable = directory.getUsableSpace();
            while (usable + freed - length < minFreeBytes) {
                // short of disk: nothing moves (a move writes before its slab is deleted)
                cancelMoves(victims);
                int before = victims.size();
                if (!evict || !evictOne(victims, false)) {
                    appendedSinceSpaceCheck = SPACE_CHECK_BYTES; // check again next time
                    return false;
                }
                freed += victims.get(before).bytes;
            }
        }
        return true;
    }

    /**
     * Evicts the least recently used unit (a file being rewritten first, the slab being filled
     * last) into {@code victims}, marking a slab's used blocks to move ({@link #markLeaving}) with
     * {@code moveUsed}; false if there was nothing to evict.
     */
    @GuardedBy("this")
    private boolean evictOne(List<DiskUnit> victims, boolean moveUsed) {
        DiskUnit victim = null;
        for (String file : evictFirst) {
            victim = wholeFiles.get(file);
            if (victim != null) {
                break;
            }
        }
        Iterator<DiskUnit> it = recency.keySet().iterator();
        while (victim == null && it.hasNext()) {
            DiskUnit u = it.next();
            if (u != active) {
                victim = u;
                break;
            }
        }
        if (victim == null) {
            victim = active;
        }
        if (victim == null) {
            return false;
        }
        if (moveUsed && keepUsedBlocks && victim instanceof DiskSlab slab) {
            markLeaving(slab);
        }
        removeUnit(victim);
        evictions.increment();
        victims.add(victim);
        return true;
    }

    /** Removes a unit and everything pointing into it. REQUIRES: lock held. */
    @GuardedBy("this")
    private void removeUnit(DiskUnit unit) {
        if (recency.remove(unit) == null) {
            return;
        }
        usedBytes -= unit.bytes;
        if (unit == active) {
            active = null;
        }
        if (unit instanceof LocalFileCopy copy) {
            wholeFiles.remove(copy.sourceFile, copy);
            wholeFileBytes -= copy.bytes;
        } else if (unit instanceof DiskSlab slab) {
            for (BlockKey k : slab.keys) {
                Location at = index.get(k);
                if (at != null && at.slab() == slab && !slab.leaving.contains(k)) {
                    forgetBlock(k, at);
                }
            }
        }
    }

    /**
     * Marks the blocks of {@code slab}, about to be evicted, that were used since they were stored
     * there as {@link DiskSlab#leaving}, in the order they were stored, up to half the slab's bytes
     * (so that every eviction frees at least half of what it takes) and at most {@link
     * #MOST_BYTES_MOVED}. Their marks are cleared: a read while they move sets them again, and the
     * moved copies inherit them.
     */
    @GuardedBy("this")
    private void markLeaving(DiskSlab slab) {
        Set<BlockKey> used = new LinkedHashSet<>();
        long limit = Math.min(slab.bytes / 2, MOST_BYTES_MOVED);
        long bytes = 0;
        for (BlockKey k : slab.keys) {
            Location at = index.get(k);
            if (at != null
                    && at.slab() == slab
                    && at.used
                    && bytes + at.length() <= limit
                    && used.add(k)) {
                bytes += at.length();
                at.used = false;
            }
        }
        slab.leaving = used;
        if (!used.isEmpty()) {
            moving.add(slab);
        }
    }

    /** Forgets the blocks {@code victims} (evicted slabs) were to move; they move nothing. */
    @GuardedBy("this")
    private void cancelMoves(List<DiskUnit> victims) {
        for (DiskUnit v : victims) {
            if (v instanceof DiskSlab slab && moving.remove(slab)) {
                for (BlockKey key : slab.leaving) {
                    Location at = index.get(key);
                    if (at != null && at.slab() == slab) {
                        forgetBlock(key, at);
                    }
                }
                slab.leaving = Set.of();
            }
        }
    }

    /**
     * Records a use of a cached block: makes its slab the most recently used unit and, with {@link
     * #keepUsedBlocks}, marks the block to move when its slab is evicted after all.
     */
    @GuardedBy("this")
    private void useBlock(Location at) {
        recency.get(at.slab());
        if (keepUsedBlocks) {
            at.used = true;
        }
    }

    /**
     * Deletes evicted units, outside the lock; an evicted slab's used blocks ({@link
     * DiskSlab#leaving}) are first moved to the newest slab.
     */
    private void dropVictims(List<DiskUnit> victims) {
        List<DiskSlab> withMoves = new ArrayList<>();
        synchronized (this) {
            for (DiskUnit v : victims) {
                if (v instanceof DiskSlab slab && moving.contains(slab)) {
                    withMoves.add(slab);
                }
            }
        }
        for (DiskUnit v : victims) {
            if (!withMoves.contains(v)) {
                v.drop(); // first: their space is free on disk before anything moves
            }
        }
        Throwable failure = null;
        for (DiskSlab slab : withMoves) {
            try {
                moveUsedBlocks(slab);
            } catch (RuntimeException | Error e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            } finally {
                slab.drop();
            }
        }
        if (failure instanceof RuntimeException e) {
            throw e;
        } else if (failure instanceof Error e) {
            throw e;
        }
    }

    /**
     * Moves the used blocks of the evicted {@code from} (its {@link DiskSlab#leaving} set) to the
     * newest slab, into free room only (what the eviction left), each read back from {@code from}
     * and checked against the CRC32C it was offered with: a block that keeps being read survives
     * the eviction of the blocks around it, which a slab, the unit of eviction, otherwise takes
     * along (with skewed keys the hot blocks are spread over every slab). Reads meanwhile are
     * served from {@code from}, which is deleted only after this. A block that cannot be moved (no
     * room, a read error, {@code from} dropped, its file forgotten, an interrupted thread) is
     * forgotten.
     */
    private void moveUsedBlocks(DiskSlab from) {
        List<BlockKey> keys;
        synchronized (this) {
            if (!moving.contains(from)) {
                return;
            }
            keys = new ArrayList<>(from.leaving);
        }
        boolean goOn = true;
        try {
            for (BlockKey key : keys) {
                Location at;
                synchronized (this) {
                    at = index.get(key);
                }
                if (at == null || at.slab() != from) {
                    continue; // forgotten meanwhile
                }
                beforeMove.run();
                FreeRoomOffer moved = FreeRoomOffer.NOT_TAKEN;
                if (goOn && !Thread.currentThread().isInterrupted()) {
                    String wrong = null;
                    try {
                        byte[] data = from.read(at.position(), at.length());
                        if (crc32c(data) == at.crc()) {
                            moved = store(key.file(), key.offset(), data, false, at);
                        } else {
                            wrong = "CRC32C mismatch";
                        }
                    } catch (ClosedChannelException e) {
                        goOn = false; // dropped meanwhile (closed, invalidated) or interrupted
                    } catch (IOException e) {
                        wrong = e.toString();
                    }
                    if (wrong != null) {
                        goOn = false;
                        invalidations.increment();
                        LOG.warn(
                                "Not keeping the blocks of evicted local cache file {}: its copy"
                                        + " of {} at {} is bad ({})",
                                from.file,
                                key.file(),
                                key.offset(),
                                wrong);
                    }
                    goOn &= moved != FreeRoomOffer.NO_ROOM && takesWrites();
                }
                if (moved == FreeRoomOffer.STORED) {
                    blocksKept.increment();
                } else {
                    synchronized (this) {
                        forgetBlock(key, at);
                    }
                }
            }
        } finally {
            synchronized (this) {
                for (BlockKey key : from.leaving) { // those not reached (a throwable)
                    Location at = index.get(key);
                    if (at != null && at.slab() == from) {
                        forgetBlock(key, at);
                    }
                }
                moving.remove(from);
                from.leaving = Set.of();
            }
        }
    }

    /** Removes the index entry of {@code key} if it is still {@code at}. */
    @GuardedBy("this")
    private void forgetBlock(BlockKey key, Location at) {
        if (index.get(key) != at) {
            return;
        }
        index.remove(key);
        Set<Long> offsets = offsetsByFile.get(key.file());
        if (offsets != null) {
            offsets.remove(key.offset());
            if (offsets.isEmpty()) {
                offsetsByFile.remove(key.file());
            }
        }
    }

    private void dropUnit(DiskUnit unit) {
        synchronized (this) {
            removeUnit(unit);
        }
        unit.drop();
    }

    private static int crc32c(byte[] b) {
        CRC32C crc = new CRC32C();
        crc.update(b, 0, b.length);
        return (int) crc.getValue();
    }

    @GuardedBy("this")
    private File newFile(String prefix, String suffix) {
        return new File(directory, prefix + (nextFileId++) + suffix);
    }

    /**
     * Counts a failed local write and pauses local writes for {@link #WRITE_PAUSE_NANOS}; the
     * caller logs the cause (once per pause, as writes are skipped meanwhile).
     */
    void recordWriteFailure() {
        writeFailures.increment();
        writesPausedUntil = System.nanoTime() + WRITE_PAUSE_NANOS;
    }

    private boolean writesPaused() {
        return System.nanoTime() - writesPausedUntil < 0;
    }

    /** Deletes every local file; later reads miss and offers are ignored. Idempotent. */
    @Override
    public void close() {
        List<DiskUnit> all;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            all = new ArrayList<>(recency.keySet());
            recency.clear();
            index.clear();
            offsetsByFile.clear();
            wholeFiles.clear();
            moving.clear();
            active = null;
            usedBytes = 0;
            reservedBytes = 0;
            wholeFileBytes = 0;
        }
        all.forEach(DiskUnit::drop);
        inUse.release();
        try {
            FileUtils.deleteDirectory(directory);
        } catch (IOException e) {
            LOG.warn("Could not delete the local cache directory {}: {}", directory, e.toString());
        }
    }

    public File directory() {
        return directory;
    }

    public long capacityBytes() {
        return capacityBytes;
    }

    /** Bytes of local files the cache holds now. */
    public synchronized long usedBytes() {
        return usedBytes;
    }

    /** Bytes of the whole-file copies held now. */
    public synchronized long wholeFileBytes() {
        return wholeFileBytes;
    }

    /** Number of whole-file copies held now. */
    public synchronized int wholeFileCount() {
        return wholeFiles.size();
    }

    /** Number of whole-file copies held now that are read through a memory mapping. */
    public synchronized int mappedWholeFileCount() {
        return (int) wholeFiles.values().stream().filter(LocalFileCopy::isMapped).count();
    }

    /**
     * Visits what the cache holds, the most recently used unit first: a whole-file copy as one
     * visit, a slab as one visit per block in it (in the order they were appended). Stops when the
     * visitor returns false. The visitor runs outside the cache's lock, which is taken once for the
     * recency order and then once per slab, for a copy of its entries: a large tier (a 1 GiB one
     * holds about 260,000 blocks) never blocks reads for the whole visit. Slabs evicted meanwhile
     * are passed over (whole copies are reported as the visit found them); the result is a recent
     * view, not an atomic one.
     */
    public void visitRecentFirst(CacheHint.Visitor visitor) {
        DiskUnit[] units;
        long[] unitBytes;
        synchronized (this) {
            units = recency.keySet().toArray(new DiskUnit[0]);
            unitBytes = new long[units.length];
            for (int u = 0; u < units.length; u++) {
                unitBytes[u] = units[u].bytes;
            }
        }
        for (int u = units.length - 1; u >= 0; u--) {
            if (units[u] instanceof LocalFileCopy copy) {
                if (!visitor.wholeFile(copy.sourceFile, unitBytes[u])) {
                    return;
                }
            } else if (units[u] instanceof DiskSlab slab) {
                List<BlockKey> keys = new ArrayList<>();
                int[] lengths;
                synchronized (this) {
                    if (!recency.containsKey(slab)) {
                        continue; // evicted meanwhile
                    }
                    lengths = new int[slab.keys.size()];
                    for (BlockKey key : slab.keys) {
                        Location at = index.get(key);
                        // a key dropped from this slab and cached again in a newer one is that
                        // one's
                        if (at != null && at.slab() == slab) {
                            lengths[keys.size()] = at.length();
                            keys.add(key);
                        }
                    }
                }
                for (int k = 0; k < keys.size(); k++) {
                    BlockKey key = keys.get(k);
                    if (!visitor.block(key.file(), key.offset(), lengths[k])) {
                        return;
                    }
                }
            }
        }
    }

    /** Number of cached blocks (outside whole-file copies) held now. */
    public synchronized int blockCount() {
        return index.size();
    }

    public long hitCount() {
        return hits.sum();
    }

    public long missCount() {
        return misses.sum();
    }

    public long bytesWritten() {
        return bytesWritten.sum();
    }

    public long evictionCount() {
        return evictions.sum();
    }

    /** Units dropped because their bytes failed verification or could not be read. */
    public long invalidationCount() {
        return invalidations.sum();
    }

    /** Local writes that failed (e.g. a full disk). */
    public long writeFailureCount() {
        return writeFailures.sum();
    }

    /** Offers and copies not cached for lack of room (capacity or free-space reserve). */
    public long refusalCount() {
        return refusals.sum();
    }

    /** Used blocks of evicted slabs moved to the newest slab ({@link #moveUsedBlocks}). */
    public long blocksKeptCount() {
        return blocksKept.sum();
    }

    /** Verifies the class invariants; throws {@link IllegalStateException} on violation. */
    public synchronized void checkInvariants() {
        long sum = reservedBytes;
        for (DiskUnit u : recency.keySet()) {
            sum += u.bytes;
        }
        check(reservedBytes >= 0, "reserved " + reservedBytes);
        check(sum == usedBytes, "accounting " + sum + " != " + usedBytes);
        check(usedBytes <= capacityBytes, "used " + usedBytes + " > " + capacityBytes);
        for (Map.Entry<BlockKey, Location> e : index.entrySet()) {
            DiskSlab slab = e.getValue().slab();
            check(
                    recency.containsKey(slab)
                            || (moving.contains(slab) && slab.leaving.contains(e.getKey())),
                    "index entry " + e.getKey() + " points into an evicted slab");
        }
        for (LocalFileCopy c : wholeFiles.values()) {
            check(recency.containsKey(c), "whole copy of " + c.sourceFile + " not in the order");
        }
    }

    private static void check(boolean ok, String msg) {
        if (!ok) {
            throw new IllegalStateException("DiskCache invariant violated: " + msg);
        }
    }
}
