package io.github.flinkstate.changelog;

import java.time.Duration;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.MemorySize;

/**
 * All configuration options of this module: the {@code dfs-batched} DSTL (read from the TaskManager
 * configuration, because Flink creates changelog storages per job per TaskManager from it) and the
 * {@link ChangelogStateBackendFactory} (read from the job/cluster configuration).
 *
 * <p>Thread safety: constants only.
 */
public final class DfsChangelogOptions {

    /** Prefix of every DSTL option. */
    public static final String PREFIX = "state.changelog.dstl.dfs-batched.";

    public static final ConfigOption<String> BASE_PATH =
            ConfigOptions.key(PREFIX + "base-path")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "Required. Base URI of the DSTL files, on any Flink file system"
                                    + " (hdfs://, s3://, file://). Files go to"
                                    + " <base-path>/<job-id>/dstl/.");

    public static final ConfigOption<Boolean> COMPRESSION_ENABLED =
            ConfigOptions.key(PREFIX + "compression.enabled")
                    .booleanType()
                    .defaultValue(true)
                    .withDescription(
                            "Whether segments are compressed (raw DEFLATE, fastest level). A segment"
                                    + " that does not shrink is stored uncompressed either way.");

    public static final ConfigOption<Duration> PERSIST_DELAY =
            ConfigOptions.key(PREFIX + "batch.persist-delay")
                    .durationType()
                    .defaultValue(Duration.ofMillis(10))
                    .withDescription(
                            "How long an upload request may wait for requests of other tasks of the"
                                    + " same job on this TaskManager, so that they share one file."
                                    + " 0 uploads every request at once. See also"
                                    + " batch.persist-size-threshold.");

    public static final ConfigOption<MemorySize> PERSIST_SIZE_THRESHOLD =
            ConfigOptions.key(PREFIX + "batch.persist-size-threshold")
                    .memoryType()
                    .defaultValue(MemorySize.parse("10mb"))
                    .withDescription(
                            "Uncompressed bytes waiting for upload at which a batch is uploaded"
                                    + " without waiting for batch.persist-delay.");

    public static final ConfigOption<Duration> CHECKPOINT_MAX_WAIT =
            ConfigOptions.key(PREFIX + "batch.checkpoint-max-wait")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(1))
                    .withDescription(
                            "How long a checkpoint's upload request waits for the same"
                                    + " checkpoint's requests of the job's other tasks on this"
                                    + " TaskManager, so that a checkpoint writes one file per"
                                    + " TaskManager: the file is cut as soon as every task asked."
                                    + " A checkpoint cannot complete before its last task anyway."
                                    + " 0 turns the wait off: a checkpoint's request cuts the"
                                    + " batch at once. A wait shorter than batch.persist-delay"
                                    + " is raised to it.");

    public static final ConfigOption<MemorySize> PREEMPTIVE_PERSIST_THRESHOLD =
            ConfigOptions.key(PREFIX + "preemptive-persist-threshold")
                    .memoryType()
                    .defaultValue(MemorySize.parse("5mb"))
                    .withDescription(
                            "Uncompressed bytes per writer (one keyed operator subtask) that"
                                    + " may accumulate before they are uploaded ahead of the next"
                                    + " checkpoint. The writers of one job on a TaskManager decide"
                                    + " together: when the bytes they hold and have not uploaded"
                                    + " reach this threshold times the number of writers that"
                                    + " hold any, all of them are uploaded in one file. Pre-emptive uploads are held"
                                    + " back while the storage is back-pressured"
                                    + " (upload.max-in-flight).");

    public static final ConfigOption<MemorySize> ENCODE_AHEAD_SIZE =
            ConfigOptions.key(PREFIX + "encode-ahead-size")
                    .memoryType()
                    .defaultValue(MemorySize.parse("1mb"))
                    .withDescription(
                            "Uncompressed bytes per writer after which its changes since the last"
                                    + " seal are sealed into a change set of their own and encoded"
                                    + " (ordered by key group and compressed) on an upload thread"
                                    + " at once, ahead of the next checkpoint, so a checkpoint has"
                                    + " at most this much per writer left to encode. Each such"
                                    + " change set is a segment of its own: smaller values mean"
                                    + " shorter checkpoints but more segments to read on restore.");

    public static final ConfigOption<MemorySize> MAX_IN_FLIGHT =
            ConfigOptions.key(PREFIX + "upload.max-in-flight")
                    .memoryType()
                    .defaultValue(MemorySize.parse("100mb"))
                    .withDescription(
                            "Uncompressed bytes queued or being uploaded at which the storage"
                                    + " reports itself unavailable, which pauses the input of the"
                                    + " job's tasks on this TaskManager (back-pressure) instead of"
                                    + " failing them. Checkpoint uploads are still accepted, so the"
                                    + " bound can be exceeded by one checkpoint's data.");

    public static final ConfigOption<Integer> UPLOAD_THREADS =
            ConfigOptions.key(PREFIX + "upload.num-threads")
                    .intType()
                    .defaultValue(5)
                    .withDescription(
                            "Threads writing DSTL files (per job per TaskManager). Hedged attempts"
                                    + " need a free thread to start.");

    public static final ConfigOption<Duration> UPLOAD_TIMEOUT =
            ConfigOptions.key(PREFIX + "upload.timeout")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(1))
                    .withDescription(
                            "Time after which an unfinished upload attempt is hedged: a new attempt"
                                    + " writes the same bytes to a new file while the old one keeps"
                                    + " running; the first to finish wins and the other file is"
                                    + " deleted. With upload.hedge.adaptive (the default) this is"
                                    + " the longest hedging delay; the delay actually used follows"
                                    + " recent upload times.");

    public static final ConfigOption<Boolean> UPLOAD_HEDGE_ADAPTIVE =
            ConfigOptions.key(PREFIX + "upload.hedge.adaptive")
                    .booleanType()
                    .defaultValue(true)
                    .withDescription(
                            "Hedge an upload attempt once it has run 3 times as long as the 90th"
                                    + " percentile of the storage's recent successful attempts of a"
                                    + " similar size (at least upload.hedge.min-delay, at most"
                                    + " upload.timeout), instead of only after upload.timeout: a"
                                    + " write stuck in the file system's latency tail then delays"
                                    + " its checkpoint by about that time, not by the timeout."
                                    + " Warm-up: before any attempt finished,"
                                    + " upload.hedge.initial-delay applies; until 8 comparable"
                                    + " attempts were seen, 6 times the median of recent attempts"
                                    + " of any size, each scaled up to the upload's size if it"
                                    + " wrote less (same bounds).");

    public static final ConfigOption<Duration> UPLOAD_HEDGE_MIN_DELAY =
            ConfigOptions.key(PREFIX + "upload.hedge.min-delay")
                    .durationType()
                    .defaultValue(Duration.ofMillis(50))
                    .withDescription(
                            "The shortest time an upload attempt runs before adaptive hedging"
                                    + " (upload.hedge.adaptive) starts another attempt.");

    public static final ConfigOption<Duration> UPLOAD_HEDGE_INITIAL_DELAY =
            ConfigOptions.key(PREFIX + "upload.hedge.initial-delay")
                    .durationType()
                    .defaultValue(Duration.ofMillis(250))
                    .withDescription(
                            "With adaptive hedging (upload.hedge.adaptive), the hedging delay of"
                                    + " uploads started before any upload of the storage finished,"
                                    + " when nothing has been learnt yet (at least"
                                    + " upload.hedge.min-delay, at most upload.timeout). A first"
                                    + " upload slower than this is written twice; the first copy"
                                    + " to finish wins and the other file is deleted.");

    public static final ConfigOption<Duration> UPLOAD_DEADLINE =
            ConfigOptions.key(PREFIX + "upload.deadline")
                    .durationType()
                    .defaultValue(Duration.ofMinutes(1))
                    .withDescription(
                            "Time after which an upload batch that has not succeeded is given up,"
                                    + " counted from when it is handed to the upload threads"
                                    + " (queueing included): the checkpoints waiting for it fail,"
                                    + " its bytes stop counting as in flight, attempts still"
                                    + " running are interrupted and their files deleted when they"
                                    + " return. Bounds the damage of a hung DFS write, which"
                                    + " hedging alone cannot end. Keep it below"
                                    + " execution.checkpointing.timeout.");

    public static final ConfigOption<Integer> MAX_ATTEMPTS =
            ConfigOptions.key(PREFIX + "upload.max-attempts")
                    .intType()
                    .defaultValue(3)
                    .withDescription(
                            "Maximum attempts (first try, hedges and retries) per batch. When all"
                                    + " failed, the checkpoints waiting for the batch fail; the job"
                                    + " does not.");

    public static final ConfigOption<Duration> RETRY_DELAY =
            ConfigOptions.key(PREFIX + "upload.retry-delay")
                    .durationType()
                    .defaultValue(Duration.ofMillis(100))
                    .withDescription(
                            "Delay before a new attempt after an attempt failed with an error"
                                    + " (timeouts are hedged immediately).");

    public static final ConfigOption<Integer> DISCARD_THREADS =
            ConfigOptions.key(PREFIX + "discard.num-threads")
                    .intType()
                    .defaultValue(1)
                    .withDescription("Threads deleting DSTL files no checkpoint uses.");

    public static final ConfigOption<Integer> DOWNLOAD_THREADS =
            ConfigOptions.key(PREFIX + "download.num-threads")
                    .intType()
                    .defaultValue(4)
                    .withDescription(
                            "Threads downloading DSTL files in parallel during restore; with the"
                                    + " local cache off, the threads that read segments in place.");

    public static final ConfigOption<Boolean> DOWNLOAD_CACHE_ENABLED =
            ConfigOptions.key(PREFIX + "download.local-cache.enabled")
                    .booleanType()
                    .defaultValue(true)
                    .withDescription(
                            "Whether files on distributed file systems are downloaded once into a"
                                    + " local directory (under io.tmp.dirs) and read from there"
                                    + " during restore. Files on local file systems are never"
                                    + " copied.");

    public static final ConfigOption<Duration> DOWNLOAD_CACHE_IDLE_TIMEOUT =
            ConfigOptions.key(PREFIX + "download.local-cache.idle-timeout")
                    .durationType()
                    .defaultValue(Duration.ofMinutes(10))
                    .withDescription(
                            "A cached file not read for this long is deleted from the local cache.");

    public static final ConfigOption<Duration> DOWNLOAD_STALL_TIMEOUT =
            ConfigOptions.key(PREFIX + "download.stall-timeout")
                    .durationType()
                    .defaultValue(Duration.ofMinutes(2))
                    .withDescription(
                            "A restore waiting for a DSTL file's download fails once no byte of any"
                                    + " download arrived for this long: the file system is taken"
                                    + " as unreachable or hanging, the download is abandoned and"
                                    + " the restoring task fails (Flink restarts it) instead of"
                                    + " waiting as long as the file system does. Applies to the"
                                    + " local download cache (files on distributed file systems)"
                                    + " and, with the cache disabled, to every read in place,"
                                    + " which then runs on a download thread (so at most"
                                    + " 'download.num-threads' segments of a job on a"
                                    + " TaskManager are read at once) under one clock for all"
                                    + " reads in place.");

    /** Option of {@link ChangelogStateBackendFactory}: the backend that Flink's changelog wraps. */
    public static final ConfigOption<String> DELEGATE =
            ConfigOptions.key("state.backend.changelog.delegate")
                    .stringType()
                    .defaultValue("hashmap")
                    .withDescription(
                            "Backend wrapped by Flink's ChangelogStateBackend when state.backend.type"
                                    + " is io.github.flinkstate.changelog.ChangelogStateBackendFactory:"
                                    + " 'hashmap', 'rocksdb', 'forst' or the class name of a"
                                    + " StateBackendFactory.");

    private DfsChangelogOptions() {}
}
