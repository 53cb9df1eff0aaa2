package io.github.flinkstate.disagg.engine;

import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.disagg.engine.compaction.CompactionFilter;
import io.github.flinkstate.disagg.engine.fs.FileDeletionPolicy;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.memtable.WriteBufferBudget;
import io.github.flinkstate.disagg.engine.sst.BlockCompression;
import io.github.flinkstate.disagg.engine.sst.IoRateLimiter;
import io.github.flinkstate.disagg.engine.sst.SstReader;
import java.util.Objects;
import java.util.function.LongSupplier;
import java.util.function.ToIntFunction;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

/**
 * Plain configuration of an {@link LsmStore} (the Flink backend maps its ConfigOptions onto it).
 *
 * <p>Thread safety: a mutable builder-style holder; do not change it after opening a store.
 */
public final class LsmOptions {

    /** Default largest readahead window of compactions and long scans: 2 MiB. */
    public static final int DEFAULT_READAHEAD_BYTES = 2 << 20;

    /** Largest compaction rate limit; higher rates are not paced at all. */
    public static final long MAX_PACED_BYTES_PER_SECOND = 8L << 30;

    /** Whether a rate limit of {@code bytesPerSecond} paces anything (see the rate options). */
    static boolean paces(long bytesPerSecond) {
        return bytesPerSecond > 0 && bytesPerSecond <= MAX_PACED_BYTES_PER_SECOND;
    }

    private FileSystem fileSystem;
    private Path primaryDir;
    private KeyGroupSpan keyGroups;
    private long memtableBytes = 4L << 20;
    private int maxImmutableMemtables = 2;
    private int blockSize = 4096;
    private int bloomBitsPerKey = 10;
    private long targetFileBytes = 16L << 20;
    private int numLevels = 7;
    private int l0CompactionTrigger = 4;
    private int l0StopWritesTrigger = 36;
    private long levelBaseBytes = 64L << 20;
    private int levelMultiplier = 10;
    private int maxOpenFiles = 512;
    private int streamsPerFile = SstReader.DEFAULT_STREAMS_PER_FILE;
    private int readaheadBytes = DEFAULT_READAHEAD_BYTES;
    private long compactionBytesPerSecond;
    private IoRateLimiter compactionRateLimiter;
    private long warmUpBytesPerSecond;
    private IoRateLimiter warmUpRateLimiter;
    private boolean cacheHintInSnapshots = true;
    private BlockCache blockCache;
    private WriteBufferBudget writeBufferBudget;
    private FileDeletionPolicy deletionPolicy = FileDeletionPolicy.ownedFilesOnly();
    private boolean backgroundCompaction = true;
    private int backgroundThreads = 2;
    private int copyThreads = 4;
    private BlockCompression compression = BlockCompression.NONE;
    private CompactionFilter.Factory compactionFilter = CompactionFilter.Factory.NONE;
    private ToIntFunction<byte[]> bloomPrefix;
    private long periodicCompactionMillis;
    private LongSupplier clock = System::currentTimeMillis;

    /**
     * @param fileSystem the file system of the primary copy (file://, hdfs://, ...); also used to
     *     read restored files, whose paths are full URIs
     * @param primaryDir directory where this store writes its SST files (created if missing)
     * @param keyGroups the key groups this store holds; writes outside are rejected and restored
     *     files are clipped to it
     */
    public LsmOptions(FileSystem fileSystem, Path primaryDir, KeyGroupSpan keyGroups) {
        this.fileSystem = Objects.requireNonNull(fileSystem);
        this.primaryDir = Objects.requireNonNull(primaryDir);
        this.keyGroups = Objects.requireNonNull(keyGroups);
    }

    /** A copy for another store (e.g. a restore with a different key-group span or directory). */
    public LsmOptions copy(Path dir, KeyGroupSpan span) {
        LsmOptions o = new LsmOptions(fileSystem, dir, span);
        o.memtableBytes = memtableBytes;
        o.maxImmutableMemtables = maxImmutableMemtables;
        o.blockSize = blockSize;
        o.bloomBitsPerKey = bloomBitsPerKey;
        o.targetFileBytes = targetFileBytes;
        o.numLevels = numLevels;
        o.l0CompactionTrigger = l0CompactionTrigger;
        o.l0StopWritesTrigger = l0StopWritesTrigger;
        o.levelBaseBytes = levelBaseBytes;
        o.levelMultiplier = levelMultiplier;
        o.maxOpenFiles = maxOpenFiles;
        o.streamsPerFile = streamsPerFile;
        o.readaheadBytes = readaheadBytes;
        o.compactionBytesPerSecond = compactionBytesPerSecond;
        o.compactionRateLimiter = compactionRateLimiter;
        o.warmUpBytesPerSecond = warmUpBytesPerSecond;
        o.cacheHintInSnapshots = cacheHintInSnapshots;
        o.blockCache = blockCache;
        o.writeBufferBudget = writeBufferBudget;
        o.deletionPolicy = deletionPolicy;
        o.backgroundCompaction = backgroundCompaction;
        o.backgroundThreads = backgroundThreads;
        o.copyThreads = copyThreads;
        o.compression = compression;
        o.compactionFilter = compactionFilter;
        o.bloomPrefix = bloomPrefix;
        o.periodicCompactionMillis = periodicCompactionMillis;
        o.clock = clock;
        return o;
    }

    public FileSystem fileSystem() {
        return fileSystem;
    }

    public Path primaryDir() {
        return primaryDir;
    }

    public KeyGroupSpan keyGroups() {
        return keyGroups;
    }

    /**
     * Bytes of keys and values (plus overhead) after which the active memtable is frozen. Default 4
     * MiB.
     */
    public long memtableBytes() {
        return memtableBytes;
    }

    public LsmOptions memtableBytes(long v) {
        memtableBytes = positive(v);
        return this;
    }

    /** Frozen memtables waiting for flush before writers block. Default 2. */
    public int maxImmutableMemtables() {
        return maxImmutableMemtables;
    }

    public LsmOptions maxImmutableMemtables(int v) {
        maxImmutableMemtables = (int) positive(v);
        return this;
    }

    /** Target uncompressed data block size in bytes. Default 4096. */
    public int blockSize() {
        return blockSize;
    }

    public LsmOptions blockSize(int v) {
        blockSize = (int) positive(v);
        return this;
    }

    /** Bloom filter bits per key; 0 disables the filter. Default 10 (about 1% false positives). */
    public int bloomBitsPerKey() {
        return bloomBitsPerKey;
    }

    public LsmOptions bloomBitsPerKey(int v) {
        bloomBitsPerKey = Math.max(0, v);
        return this;
    }

    /** The bloom prefix function, or null (the default: filters hold whole keys only). */
    public ToIntFunction<byte[]> bloomPrefix() {
        return bloomPrefix;
    }

    /**
     * Makes the bloom filters of new files also hold a prefix of every key: the first {@code
     * f.applyAsInt(key)} bytes, when that is positive and shorter than the key. A scan of exactly
     * such a prefix ({@code scanPrefix(p)} with {@code f(p) == p.length}) then skips the files
     * whose filter does not hold it. REQUIRES, for soundness: a pure function of the key bytes that
     * never changes for a store's files, and for every key {@code k} that starts with a prefix
     * {@code p} with {@code f(p) == p.length}, {@code f(k) == p.length}.
     */
    public LsmOptions bloomPrefix(ToIntFunction<byte[]> f) {
        bloomPrefix = f;
        return this;
    }

    /** Compaction output files are cut after this many bytes. Default 16 MiB. */
    public long targetFileBytes() {
        return targetFileBytes;
    }

    public LsmOptions targetFileBytes(long v) {
        targetFileBytes = positive(v);
        return this;
    }

    /** Number of levels (L0 .. L{n-1}). Default 7. */
    public int numLevels() {
        return numLevels;
    }

    public LsmOptions numLevels(int v) {
        numLevels = Math.max(2, v);
        return this;
    }

    /** L0 file count that triggers an L0 -> L1 compaction. Default 4. */
    public int l0CompactionTrigger() {
        return l0CompactionTrigger;
    }

    public LsmOptions l0CompactionTrigger(int v) {
        l0CompactionTrigger = (int) positive(v);
        return this;
    }

    /**
     * Level-0 files this store flushed itself at which a write that needs a new memtable waits for
     * background compaction to bring them below it (files restored from a snapshot do not count, so
     * a restore never makes the first writes wait). Without background compaction writes never
     * wait. Default 36 (RocksDB's stop trigger): a burst of writes fills level 0 instead of waiting
     * for compactions (a second of 1 KB list appends ran 1.35x faster than with 20), at the price
     * of reads that probe more level-0 files until compaction catches up.
     */
    public int l0StopWritesTrigger() {
        return l0StopWritesTrigger;
    }

    public LsmOptions l0StopWritesTrigger(int v) {
        l0StopWritesTrigger = (int) positive(v);
        return this;
    }

    /** Target size of L1 in bytes; Ln targets base * multiplier^(n-1). Default 64 MiB. */
    public long levelBaseBytes() {
        return levelBaseBytes;
    }

    public LsmOptions levelBaseBytes(long v) {
        levelBaseBytes = positive(v);
        return this;
    }

    /** Size ratio between adjacent levels. Default 10. */
    public int levelMultiplier() {
        return levelMultiplier;
    }

    public LsmOptions levelMultiplier(int v) {
        levelMultiplier = Math.max(2, v);
        return this;
    }

    /** Bound on cached open file readers. Default 512. */
    public int maxOpenFiles() {
        return maxOpenFiles;
    }

    public LsmOptions maxOpenFiles(int v) {
        maxOpenFiles = (int) positive(v);
        return this;
    }

    /**
     * Bound on concurrent reads of one file, each on its own input stream (opened on demand, kept
     * until the file's reader closes). Default {@value SstReader#DEFAULT_STREAMS_PER_FILE}.
     */
    public int streamsPerFile() {
        return streamsPerFile;
    }

    public LsmOptions streamsPerFile(int v) {
        streamsPerFile = (int) positive(v);
        return this;
    }

    /**
     * Largest readahead window: a compaction reads its input files in reads of this many bytes of
     * consecutive blocks (at least one block), and a scan that has read 3 blocks of a file in a row
     * reads the next ones in windows growing from 64 KiB to this size. Both read on streams of
     * their own (one per file for compactions, one for scans), never taking one of the {@link
     * #streamsPerFile} streams of point reads. 0: no readahead (a compaction then reads one block
     * per read, still on its own stream). Default 2 MiB.
     */
    public int readaheadBytes() {
        return readaheadBytes;
    }

    public LsmOptions readaheadBytes(int v) {
        if (v < 0) {
            throw new IllegalArgumentException("must not be negative: " + v);
        }
        readaheadBytes = v;
        return this;
    }

    /**
     * Average bytes per second a compaction may read from the primary storage plus write (a token
     * bucket with a tenth of a second of burst; foreground reads, flushes and writes are never
     * paced). 0 (default), or more than {@link #MAX_PACED_BYTES_PER_SECOND}: no limit.
     */
    public long compactionBytesPerSecond() {
        return compactionBytesPerSecond;
    }

    public LsmOptions compactionBytesPerSecond(long v) {
        if (v < 0) {
            throw new IllegalArgumentException("must not be negative: " + v);
        }
        compactionBytesPerSecond = v;
        return this;
    }

    /**
     * A limiter for compaction I/O shared by several stores (one budget for all of them), or null
     * (default). Set, it replaces {@link #compactionBytesPerSecond}; closing a store does not shut
     * it down.
     */
    public IoRateLimiter compactionRateLimiter() {
        return compactionRateLimiter;
    }

    public LsmOptions compactionRateLimiter(IoRateLimiter v) {
        compactionRateLimiter = v;
        return this;
    }

    /**
     * Average bytes per second the warm-up after a restore ({@code LsmStore#startWarmUp}) may read
     * from the primary storage to copy files into the local disk tier (a token bucket with a tenth
     * of a second of burst), so that it leaves bandwidth to the reads of the job. 0 (default), or
     * more than {@link #MAX_PACED_BYTES_PER_SECOND}: no limit.
     */
    public long warmUpBytesPerSecond() {
        return warmUpBytesPerSecond;
    }

    public LsmOptions warmUpBytesPerSecond(long v) {
        if (v < 0) {
            throw new IllegalArgumentException("must not be negative: " + v);
        }
        warmUpBytesPerSecond = v;
        return this;
    }

    /**
     * A limiter for the warm-up's copies, or null (default): set, it replaces {@link
     * #warmUpBytesPerSecond} (tests inject a clock this way). It belongs to one store: the
     * warm-up's cancel shuts it down (so that a copy waiting for its rate sees the cancel), after
     * which it paces nothing; so {@link #copy} does not carry it over.
     */
    public IoRateLimiter warmUpRateLimiter() {
        return warmUpRateLimiter;
    }

    public LsmOptions warmUpRateLimiter(IoRateLimiter v) {
        warmUpRateLimiter = v;
        return this;
    }

    /**
     * Whether a snapshot's manifest records what the caches hold ({@code CacheHint}: per file the
     * offsets of its cached blocks, or that it is cached whole, hottest first, up to the disk
     * tier's capacity), so that the warm-up after a restore fetches those first. Only with a disk
     * tier. Default true.
     */
    public boolean cacheHintInSnapshots() {
        return cacheHintInSnapshots;
    }

    public LsmOptions cacheHintInSnapshots(boolean v) {
        cacheHintInSnapshots = v;
        return this;
    }

    /** Shared block cache; null means a private 64 MiB cache. */
    public BlockCache blockCache() {
        return blockCache;
    }

    public LsmOptions blockCache(BlockCache v) {
        blockCache = v;
        return this;
    }

    /**
     * A memtable budget shared with other stores, or null (default): this store's memtables are
     * bounded only by {@link #memtableBytes} and {@link #maxImmutableMemtables}.
     */
    public WriteBufferBudget writeBufferBudget() {
        return writeBufferBudget;
    }

    public LsmOptions writeBufferBudget(WriteBufferBudget v) {
        writeBufferBudget = v;
        return this;
    }

    /** Which obsolete files the engine may delete. Default: only files this instance wrote. */
    public FileDeletionPolicy deletionPolicy() {
        return deletionPolicy;
    }

    public LsmOptions deletionPolicy(FileDeletionPolicy v) {
        deletionPolicy = Objects.requireNonNull(v);
        return this;
    }

    /** Whether compactions are scheduled automatically after flushes. Default true. */
    public boolean backgroundCompaction() {
        return backgroundCompaction;
    }

    public LsmOptions backgroundCompaction(boolean v) {
        backgroundCompaction = v;
        return this;
    }

    /** Background threads: 1 = flushes and compactions share one thread, 2 = one each. */
    public int backgroundThreads() {
        return backgroundThreads;
    }

    public LsmOptions backgroundThreads(int v) {
        if (v < 1 || v > 2) {
            throw new IllegalArgumentException("background threads must be 1 or 2: " + v);
        }
        backgroundThreads = v;
        return this;
    }

    /** Compression of the data blocks of new files. Default {@link BlockCompression#NONE}. */
    public BlockCompression compression() {
        return compression;
    }

    public LsmOptions compression(BlockCompression c) {
        compression = java.util.Objects.requireNonNull(c);
        return this;
    }

    /** Files {@code LsmStore.rehomeAll} copies at once. Default 4. */
    public int copyThreads() {
        return copyThreads;
    }

    public LsmOptions copyThreads(int v) {
        if (v < 1) {
            throw new IllegalArgumentException("copy threads must be at least 1: " + v);
        }
        copyThreads = v;
        return this;
    }

    /**
     * Decides which entries compactions and flushes drop (see {@link CompactionFilter} for what the
     * engine guarantees). Default: none.
     */
    public CompactionFilter.Factory compactionFilter() {
        return compactionFilter;
    }

    public LsmOptions compactionFilter(CompactionFilter.Factory v) {
        compactionFilter = Objects.requireNonNull(v);
        return this;
    }

    /**
     * With a compaction filter (which may adjust it: {@link
     * CompactionFilter.Factory#periodicCompactionMillis}), a file live for at least this long is
     * rewritten in place when the store has no other compaction to do (checked after flushes and at
     * snapshots), so that the filter sees data no other compaction touches. A restored file counts
     * from the store's open. 0 (default) = never.
     */
    public long periodicCompactionMillis() {
        return periodicCompactionMillis;
    }

    public LsmOptions periodicCompactionMillis(long v) {
        if (v < 0) {
            throw new IllegalArgumentException("must not be negative: " + v);
        }
        periodicCompactionMillis = v;
        return this;
    }

    /** Wall clock in milliseconds for file ages. Default {@link System#currentTimeMillis()}. */
    public LongSupplier clock() {
        return clock;
    }

    public LsmOptions clock(LongSupplier v) {
        clock = Objects.requireNonNull(v);
        return this;
    }

    private static long positive(long v) {
        if (v <= 0) {
            throw new IllegalArgumentException("must be positive: " + v);
        }
        return v;
    }
}
