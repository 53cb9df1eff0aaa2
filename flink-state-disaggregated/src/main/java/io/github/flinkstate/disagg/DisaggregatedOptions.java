package io.github.flinkstate.disagg;

import io.github.flinkstate.disagg.engine.sst.BlockCompression;
import java.time.Duration;
import java.util.List;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.ReadableConfig;

/**
 * Configuration of the disaggregated state backend ({@code state.backend.type:
 * io.github.flinkstate.disagg.DisaggregatedStateBackendFactory}). {@link #validate} checks every
 * value at start and names the option of a bad one.
 */
public final class DisaggregatedOptions {

    private DisaggregatedOptions() {}

    public static final ConfigOption<String> PRIMARY_DIRECTORY =
            ConfigOptions.key("state.backend.disaggregated.primary-dir")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "Directory (any Flink file system URI: file://, hdfs://, s3://) where the"
                                    + " LSM files of every keyed state backend live; it is the primary"
                                    + " copy of the state, and checkpoints reference these files in place."
                                    + " Default: the folder 'disaggregated' under the job's checkpoint"
                                    + " directory ('execution.checkpointing.dir'/<job-id>), so a stock"
                                    + " setup works without this option; without a file-system checkpoint"
                                    + " storage the local working directory is used.");

    public static final ConfigOption<String> LOCAL_DIRECTORY =
            ConfigOptions.key("state.backend.disaggregated.local-dir")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "Local working directory of the backend (copies of small restored state"
                                    + " files that are not on a file system, and the primary directory when"
                                    + " no file-system checkpoint storage is configured): a path or a"
                                    + " file: URI of this machine. Default: the TaskManager's first"
                                    + " temporary directory ('io.tmp.dirs').");

    public static final ConfigOption<MemorySize> MEMTABLE_SIZE =
            ConfigOptions.key("state.backend.disaggregated.memtable-size")
                    .memoryType()
                    .defaultValue(MemorySize.parse("8mb"))
                    .withDescription(
                            "Largest size of the in-memory write buffer of each keyed state backend;"
                                    + " when full it is frozen and flushed to a file in the primary"
                                    + " directory in the background. It is flushed earlier while the"
                                    + " memtables of the slot exceed their share of"
                                    + " 'state.backend.disaggregated.memory.per-slot'. A checkpoint"
                                    + " flushes it too. Between 64 KiB and 1 GiB.");

    public static final ConfigOption<MemorySize> MEMORY_PER_SLOT =
            ConfigOptions.key("state.backend.disaggregated.memory.per-slot")
                    .memoryType()
                    .defaultValue(MemorySize.parse("128mb"))
                    .withDescription(
                            "JVM heap memory shared by all disaggregated keyed state backends of one"
                                    + " task slot: the memory block cache of the data read from the"
                                    + " primary directory and the memtables (write buffers), split by"
                                    + " 'state.backend.disaggregated.memory.write-buffer-ratio'. The"
                                    + " backends of a slot compete for it in one recency order, however"
                                    + " many stateful operators the slot runs. It lives on the task heap"
                                    + " ('taskmanager.memory.task.heap.size'), not in Flink's managed"
                                    + " memory, which this backend does not use. At least 4 MiB.");

    public static final ConfigOption<Double> WRITE_BUFFER_RATIO =
            ConfigOptions.key("state.backend.disaggregated.memory.write-buffer-ratio")
                    .doubleType()
                    .defaultValue(0.25)
                    .withDescription(
                            "Fraction of 'state.backend.disaggregated.memory.per-slot' for the"
                                    + " memtables of the slot's backends. While their memtables hold"
                                    + " more, a backend that writes flushes its memtable early (once it"
                                    + " holds 256 KiB). A soft limit: it is exceeded by what is written"
                                    + " while flushes run. Between 0.05 and 0.9.");

    public static final ConfigOption<Double> ROW_CACHE_RATIO =
            ConfigOptions.key("state.backend.disaggregated.memory.row-cache-ratio")
                    .doubleType()
                    .defaultValue(0.5)
                    .withDescription(
                            "Fraction of the block cache (the part of"
                                    + " 'state.backend.disaggregated.memory.per-slot' left to it, or"
                                    + " 'state.backend.disaggregated.block-cache-size') that the row"
                                    + " caches of the backends may take together. A row cache keeps"
                                    + " what a point read (value, reducing and aggregating state, a map"
                                    + " entry) found in the files, so that reading the key again costs"
                                    + " a hash lookup instead of a search of every level; a flush makes"
                                    + " it forget the keys it writes. Rows only use memory the blocks"
                                    + " leave free: a block that needs room takes it from the rows"
                                    + " first, so a state larger than the cache keeps all of it for"
                                    + " blocks. 0 turns the row caches off. Between 0 and 0.9.");

    public static final ConfigOption<MemorySize> BLOCK_CACHE_SIZE =
            ConfigOptions.key("state.backend.disaggregated.block-cache-size")
                    .memoryType()
                    .noDefaultValue()
                    .withDescription(
                            "When set, each keyed state backend has a memory block cache of its own"
                                    + " of this size, on the JVM heap, instead of sharing the slot's"
                                    + " (see 'state.backend.disaggregated.memory.per-slot'; its"
                                    + " memtable share still applies). For tests and benchmarks that"
                                    + " need a fixed cache per backend. At least 1 MiB.");

    public static final ConfigOption<MemorySize> LOCAL_CACHE_SIZE =
            ConfigOptions.key("state.backend.disaggregated.local-cache.size")
                    .memoryType()
                    .defaultValue(MemorySize.parse("256mb"))
                    .withDescription(
                            "Capacity of the local disk cache under the memory block cache, per keyed"
                                    + " state backend, in a folder of the local working directory. It"
                                    + " keeps a copy of each file the backend writes (while whole files"
                                    + " fill at most half of it, or all of it while the backend's live"
                                    + " files fit) and the blocks read from the primary"
                                    + " directory, evicting the least recently used first; every copy is"
                                    + " checked against the file's checksums when read, and a bad copy is"
                                    + " dropped and read from the primary directory again. By default it"
                                    + " is used only when the primary directory is on a distributed file"
                                    + " system; set explicitly, it is used on any file system. 0 turns it"
                                    + " off.");

    public static final ConfigOption<MemorySize> LOCAL_CACHE_RESERVE =
            ConfigOptions.key("state.backend.disaggregated.local-cache.reserve")
                    .memoryType()
                    .defaultValue(MemorySize.parse("256mb"))
                    .withDescription(
                            "Free space the local disk cache leaves on the local working directory's"
                                    + " file system: below it the cache evicts, or stops caching, instead"
                                    + " of filling the disk. 0 or at least 1 MiB.");

    public static final ConfigOption<Boolean> LOCAL_CACHE_WARM_UP =
            ConfigOptions.key("state.backend.disaggregated.local-cache.warm-up")
                    .booleanType()
                    .defaultValue(true)
                    .withDescription(
                            "After a restore that reuses files in place, open them (index and"
                                    + " bloom filter, up to 8 files at once per backend) and copy them into the local"
                                    + " disk cache in the background, newest level first, while whole"
                                    + " files fit in their share of it (half, or all of it while the"
                                    + " backend's live files fit), then the other files' blocks into the"
                                    + " room left, evicting nothing (metrics localCacheWarmUpBytes and"
                                    + " localCacheWarmUpPlannedBytes). The job does not wait for it:"
                                    + " reads go to the primary directory until their file is copied."
                                    + " A checkpoint with a cache hint (see"
                                    + " local-cache.warm-up.hint) decides the order instead: its"
                                    + " files and blocks first.");

    public static final ConfigOption<Boolean> LOCAL_CACHE_WARM_UP_HINT =
            ConfigOptions.key("state.backend.disaggregated.local-cache.warm-up.hint")
                    .booleanType()
                    .defaultValue(true)
                    .withDescription(
                            "Record in each checkpoint and savepoint what the block cache and the"
                                    + " local disk cache hold (per file the offsets of its cached"
                                    + " blocks, or that it is cached whole; hottest first, up to the"
                                    + " local cache size; about 2 bytes per cached block, in the"
                                    + " backend's metadata file), so that the warm-up after a"
                                    + " restore fetches those blocks first instead of going by"
                                    + " level (when the files do not all fit whole: the block"
                                    + " cache's blocks back into the block cache's free room, metric"
                                    + " warmUpMemoryBytes, and the others into the local disk"
                                    + " cache). With skewed keys the hot blocks are spread over"
                                    + " every file. This option decides what checkpoints record"
                                    + " (also while the warm-up is off); a restore uses the hint of"
                                    + " the checkpoint it restores whenever its warm-up is on."
                                    + " Checkpoints without it, and files a rescale clips, warm up"
                                    + " by level. Off, the backend writes its metadata in the"
                                    + " format of releases before the hint.");

    public static final ConfigOption<Boolean> LOCAL_CACHE_MMAP =
            ConfigOptions.key("state.backend.disaggregated.local-cache.mmap")
                    .booleanType()
                    .defaultValue(true)
                    .withDescription(
                            "Read the local disk cache's whole-file copies through read-only memory"
                                    + " mappings: a read the OS page cache can serve is then a memory"
                                    + " copy, not a system call. The process maps at most a quarter of"
                                    + " vm.max_map_count (16,382 with Linux's default), never more than"
                                    + " 16,384; copies beyond that and files"
                                    + " over 2 GiB are read with system calls. A mapped page the OS"
                                    + " cannot read (a disk error, or the file truncated by another"
                                    + " process) is an InternalError of the JVM: the backend drops the"
                                    + " copy and stops mapping, but one the JVM reports after the read"
                                    + " returned fails the task (it restores). Mapped pages that were"
                                    + " read count in the process's resident set (RSS). Blocks cached"
                                    + " one by one are always read with system calls.");

    public static final ConfigOption<MemorySize> LOCAL_CACHE_WARM_UP_RATE_LIMIT =
            ConfigOptions.key("state.backend.disaggregated.local-cache.warm-up.rate-limit")
                    .memoryType()
                    .defaultValue(MemorySize.ZERO)
                    .withDescription(
                            "Bytes per second that the warm-up of each keyed state backend may read"
                                    + " from the primary directory to copy files into the local disk"
                                    + " cache, on average (a token bucket with a tenth of a second of"
                                    + " burst), so that a TaskManager restoring many backends at once"
                                    + " leaves bandwidth to the state reads of the job. The warm-up"
                                    + " then takes longer: until a file is copied its reads go to the"
                                    + " primary directory. 0 (default): no limit; otherwise at least"
                                    + " 1 MiB.");

    public static final ConfigOption<Integer> BACKGROUND_THREADS =
            ConfigOptions.key("state.backend.disaggregated.background-threads")
                    .intType()
                    .defaultValue(2)
                    .withDescription(
                            "Background threads of each keyed state backend's engine for flushes and"
                                    + " compactions: 1 shares one thread for both; 2 (default) gives each"
                                    + " its own. Between 1 and 2.");

    public static final ConfigOption<Duration> TTL_PERIODIC_COMPACTION_TIME =
            ConfigOptions.key("state.backend.disaggregated.ttl.periodic-compaction-time")
                    .durationType()
                    .defaultValue(Duration.ofDays(30))
                    .withDescription(
                            "Compactions drop the expired entries of states with a time-to-live"
                                    + " and cleanup in the background (StateTtlConfig's default), but"
                                    + " a file that no compaction touches (e.g. the last level of a"
                                    + " state that is no longer written) keeps them, and so does every"
                                    + " checkpoint referencing it. A file live for this long is therefore"
                                    + " rewritten when the backend has no other compaction to do"
                                    + " (checked after each flush and at each checkpoint); restored files"
                                    + " count from the restore. Only while some registered state has"
                                    + " such a TTL. 0 disables it; otherwise at least 1 min.");

    public static final ConfigOption<MemorySize> READAHEAD_SIZE =
            ConfigOptions.key("state.backend.disaggregated.readahead-size")
                    .memoryType()
                    .defaultValue(MemorySize.parse("2mb"))
                    .withDescription(
                            "Largest read of consecutive data blocks by a compaction or a long scan."
                                    + " A compaction reads its input files in reads of this size; a scan"
                                    + " that has read 3 blocks of a file in a row reads on in reads"
                                    + " growing from 64 KiB to this size. Both use input streams of their"
                                    + " own, so point reads never wait for them. Each such reader holds"
                                    + " one buffer of this size per file it reads. 0 turns readahead off"
                                    + " (one remote read per block). Otherwise at least 4 KiB and at most 64"
                                    + " MiB.");

    public static final ConfigOption<MemorySize> COMPACTION_RATE_LIMIT =
            ConfigOptions.key("state.backend.disaggregated.compaction.rate-limit")
                    .memoryType()
                    .defaultValue(MemorySize.ZERO)
                    .withDescription(
                            "Bytes per second that the compactions of each keyed state backend may"
                                    + " read from the primary directory plus write, on average (a token"
                                    + " bucket with a tenth of a second of burst), so that background I/O"
                                    + " leaves bandwidth to the state reads of the job. Flushes and reads"
                                    + " of the job are never paced; too low a limit lets the files of"
                                    + " level 0 pile up, slows reads and, at the level-0 stop trigger,"
                                    + " writes. 0 (default): no limit; otherwise at least 1 MiB.");

    public static final ConfigOption<Integer> COPY_THREADS =
            ConfigOptions.key("state.backend.disaggregated.copy-threads")
                    .intType()
                    .defaultValue(4)
                    .withDescription(
                            "Threads that copy inherited files into the primary directory for the"
                                    + " first checkpoint after a NO_CLAIM restore (Flink forces it to"
                                    + " be full: it may not reference the restored checkpoint's files),"
                                    + " per keyed state backend. The copy runs in the checkpoint's"
                                    + " asynchronous phase; more threads shorten it on a DFS where each"
                                    + " file's copy waits on round trips. Between 1 and 64.");

    public static final ConfigOption<BlockCompression> COMPRESSION =
            ConfigOptions.key("state.backend.disaggregated.compression")
                    .enumType(BlockCompression.class)
                    .defaultValue(BlockCompression.NONE)
                    .withDescription(
                            "Compression of the data blocks of new engine files: NONE, or LZ4 (pure"
                                    + " Java, from the lz4-java library that ships with Flink). LZ4 cuts"
                                    + " the bytes written to and read from the primary storage, at some"
                                    + " CPU cost per block read from storage or written (blocks in the"
                                    + " memory cache are kept uncompressed). Blocks that LZ4 does not"
                                    + " shrink by an eighth are stored as they are. Files written with"
                                    + " either setting stay readable when it changes.");

    public static final ConfigOption<Boolean> BACKGROUND_COPY =
            ConfigOptions.key("state.backend.disaggregated.background-copy-after-restore")
                    .booleanType()
                    .defaultValue(true)
                    .withDescription(
                            "After a restore from files outside this job's directory (another job's"
                                    + " retained checkpoint or a native savepoint), copy them into the"
                                    + " primary directory in the background, with"
                                    + " 'state.backend.disaggregated.copy-threads' threads, so that the"
                                    + " full checkpoint Flink forces after a NO_CLAIM resume has nothing"
                                    + " left to copy. When 'execution.state-recovery.claim-mode'"
                                    + " is CLAIM in the configuration only the files of a native"
                                    + " savepoint (or other files Flink restores with relative"
                                    + " handles, which no checkpoint may name where they are) are"
                                    + " copied, the others being the job's own; a claim mode set only"
                                    + " on a submitted job graph is not visible here (every restored"
                                    + " file outside the job's directory is then copied, which a CLAIM"
                                    + " resume does not need). Off: a checkpoint that must name such a"
                                    + " file copies it itself.");

    /** Every option of this class, in the order of the reference. */
    public static java.util.List<ConfigOption<?>> all() {
        return java.util.List.of(
                PRIMARY_DIRECTORY,
                LOCAL_DIRECTORY,
                MEMORY_PER_SLOT,
                WRITE_BUFFER_RATIO,
                ROW_CACHE_RATIO,
                MEMTABLE_SIZE,
                BLOCK_CACHE_SIZE,
                LOCAL_CACHE_SIZE,
                LOCAL_CACHE_RESERVE,
                LOCAL_CACHE_WARM_UP,
                LOCAL_CACHE_WARM_UP_HINT,
                LOCAL_CACHE_MMAP,
                LOCAL_CACHE_WARM_UP_RATE_LIMIT,
                BACKGROUND_THREADS,
                TTL_PERIODIC_COMPACTION_TIME,
                COPY_THREADS,
                COMPRESSION,
                READAHEAD_SIZE,
                COMPACTION_RATE_LIMIT,
                BACKGROUND_COPY);
    }

    /** Checks every option of this class; throws naming the first bad one. */
    public static void validate(ReadableConfig config) {
        try {
            long memtable = config.get(MEMTABLE_SIZE).getBytes();
            require(
                    memtable >= (64 << 10) && memtable <= (1L << 30),
                    MEMTABLE_SIZE,
                    "must be between 64 KiB and 1 GiB, was " + config.get(MEMTABLE_SIZE));
            config.getOptional(BLOCK_CACHE_SIZE)
                    .ifPresent(
                            size ->
                                    require(
                                            size.getBytes() >= (1 << 20),
                                            BLOCK_CACHE_SIZE,
                                            "must be at least 1 MiB, was " + size));
            require(
                    config.get(MEMORY_PER_SLOT).getBytes() >= (4 << 20),
                    MEMORY_PER_SLOT,
                    "must be at least 4 MiB, was " + config.get(MEMORY_PER_SLOT));
            double ratio = config.get(WRITE_BUFFER_RATIO);
            require(
                    ratio >= 0.05 && ratio <= 0.9,
                    WRITE_BUFFER_RATIO,
                    "must be between 0.05 and 0.9, was " + ratio);
            double rowRatio = config.get(ROW_CACHE_RATIO);
            require(
                    rowRatio >= 0 && rowRatio <= 0.9,
                    ROW_CACHE_RATIO,
                    "must be between 0 and 0.9, was " + rowRatio);
            long localCache = config.get(LOCAL_CACHE_SIZE).getBytes();
            require(
                    localCache == 0 || localCache >= (1 << 20),
                    LOCAL_CACHE_SIZE,
                    "must be 0 (off) or at least 1 MiB, was " + config.get(LOCAL_CACHE_SIZE));
            for (ConfigOption<MemorySize> rate :
                    List.of(COMPACTION_RATE_LIMIT, LOCAL_CACHE_WARM_UP_RATE_LIMIT)) {
                // a value without a unit is bytes: "10" would throttle to 10 bytes a second
                long bytes = config.get(rate).getBytes();
                require(
                        bytes == 0 || bytes >= (1 << 20),
                        rate,
                        "must be 0 (no limit) or at least 1 MiB per second, was "
                                + config.get(rate));
            }
            // sizes without a unit are bytes: "512" would read ahead nothing, "256" reserve nothing
            long readahead = config.get(READAHEAD_SIZE).getBytes();
            require(
                    readahead == 0 || (readahead >= (4 << 10) && readahead <= (64 << 20)),
                    READAHEAD_SIZE,
                    "must be 0 (off) or between 4 KiB and 64 MiB, was "
                            + config.get(READAHEAD_SIZE));
            long reserve = config.get(LOCAL_CACHE_RESERVE).getBytes();
            require(
                    reserve == 0 || reserve >= (1 << 20),
                    LOCAL_CACHE_RESERVE,
                    "must be 0 (no reserve) or at least 1 MiB, was "
                            + config.get(LOCAL_CACHE_RESERVE));
            int threads = config.get(BACKGROUND_THREADS);
            require(
                    threads >= 1 && threads <= 2,
                    BACKGROUND_THREADS,
                    "must be 1 or 2, was " + threads);
            int copyThreads = config.get(COPY_THREADS);
            require(
                    copyThreads >= 1 && copyThreads <= 64,
                    COPY_THREADS,
                    "must be between 1 and 64, was " + copyThreads);
            Duration periodic = config.get(TTL_PERIODIC_COMPACTION_TIME);
            require(
                    periodic.isZero() || periodic.compareTo(Duration.ofMinutes(1)) >= 0,
                    TTL_PERIODIC_COMPACTION_TIME,
                    "must be 0 (off) or at least 1 min, was " + periodic);
            config.getOptional(PRIMARY_DIRECTORY).ifPresent(DisaggregatedOptions::checkPrimary);
            config.getOptional(LOCAL_DIRECTORY).ifPresent(DisaggregatedOptions::localDirectory);
        } catch (IllegalArgumentException e) {
            throw new IllegalConfigurationException(
                    "Invalid disaggregated state backend option: " + e.getMessage(), e);
        }
    }

    /**
     * The primary directory must be a valid, absolute path or URI (a relative one resolves against
     * each TaskManager's working directory, so the checkpoints' handles would name files that a
     * restore elsewhere cannot find) on a file system Flink has an implementation for (its scheme's
     * plugin is installed). Touches no file.
     */
    private static void checkPrimary(String value) {
        org.apache.flink.core.fs.Path path = checkUri(PRIMARY_DIRECTORY, value);
        require(
                path.isAbsolute(),
                PRIMARY_DIRECTORY,
                "must be an absolute path or URI (e.g. hdfs:///flink/state), was " + value);
        try {
            path.getFileSystem();
        } catch (java.io.IOException e) {
            throw new IllegalConfigurationException(
                    "Invalid value for '"
                            + PRIMARY_DIRECTORY.key()
                            + "': No file system for "
                            + value
                            + " ("
                            + e.getMessage()
                            + ")",
                    e);
        }
    }

    private static org.apache.flink.core.fs.Path checkUri(
            ConfigOption<String> option, String value) {
        require(!value.isBlank(), option, "must not be blank");
        try {
            org.apache.flink.core.fs.Path path = new org.apache.flink.core.fs.Path(value);
            path.toUri();
            return path;
        } catch (RuntimeException e) {
            throw new IllegalConfigurationException(
                    "Invalid value for '"
                            + option.key()
                            + "': "
                            + value
                            + " ("
                            + e.getMessage()
                            + ")",
                    e);
        }
    }

    /**
     * The directory of this machine that a {@link #LOCAL_DIRECTORY} value names: a path, or a
     * {@code file:} URI.
     *
     * @throws IllegalConfigurationException naming the option for a URI of another file system
     */
    public static java.io.File localDirectory(String value) {
        checkUri(LOCAL_DIRECTORY, value);
        java.net.URI uri = new org.apache.flink.core.fs.Path(value).toUri();
        String scheme = uri.getScheme();
        require(
                scheme == null || scheme.equals("file"),
                LOCAL_DIRECTORY,
                "must be a directory of this machine (a path or a file: URI), was " + value);
        return new java.io.File(uri.getPath());
    }

    private static void require(boolean ok, ConfigOption<?> option, String msg) {
        if (!ok) {
            throw new IllegalConfigurationException(
                    "Invalid value for '" + option.key() + "': " + msg);
        }
    }
}
