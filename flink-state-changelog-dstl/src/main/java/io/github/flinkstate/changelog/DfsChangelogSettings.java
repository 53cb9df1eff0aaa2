package io.github.flinkstate.changelog;

import java.io.IOException;
import java.time.Duration;
import javax.annotation.Nullable;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.core.fs.Path;

/**
 * Validated, immutable view of {@link DfsChangelogOptions} for one storage.
 *
 * <p>Thread safety: immutable.
 *
 * @param basePath base directory; null only for restore-only views, which read absolute paths
 * @param retainedCheckpoints {@code execution.checkpointing.num-retained} of the TaskManager
 *     configuration: how many completed checkpoints the JobManager keeps, so how many newer
 *     completions a file of a possibly completed checkpoint must outlive before the TaskManager may
 *     delete it (see {@code TaskFileRegistry#releaseWhenSubsumed})
 */
public record DfsChangelogSettings(
        @Nullable Path basePath,
        boolean compression,
        Duration persistDelay,
        Duration checkpointMaxWait,
        long persistSizeThreshold,
        long preemptivePersistThreshold,
        long encodeAheadBytes,
        long maxInFlightBytes,
        int uploadThreads,
        Duration uploadTimeout,
        boolean adaptiveHedging,
        Duration hedgeMinDelay,
        Duration hedgeInitialDelay,
        Duration uploadDeadline,
        int maxAttempts,
        Duration retryDelay,
        int discardThreads,
        int downloadThreads,
        boolean downloadCacheEnabled,
        Duration downloadCacheIdleTimeout,
        Duration downloadStallTimeout,
        int retainedCheckpoints) {

    /** Reads the settings of a writing storage; the base path is required. */
    public static DfsChangelogSettings forWriting(ReadableConfig config) {
        String base = config.get(DfsChangelogOptions.BASE_PATH);
        if (base == null || base.isBlank()) {
            throw new IllegalConfigurationException(
                    "The 'dfs-batched' changelog storage needs a base directory: set '"
                            + DfsChangelogOptions.BASE_PATH.key()
                            + "' in the TaskManager configuration (e.g. hdfs:///flink/dstl).");
        }
        return read(config, basePath(base));
    }

    private static Path basePath(String base) {
        Path path;
        try {
            path = new Path(base);
        } catch (IllegalArgumentException e) {
            throw new IllegalConfigurationException(
                    "'"
                            + DfsChangelogOptions.BASE_PATH.key()
                            + "' is not a valid path or URI: '"
                            + base
                            + "' ("
                            + e.getMessage()
                            + ")",
                    e);
        }
        // a relative path resolves against each TaskManager's working directory: handles would
        // name files that a restore elsewhere and the JobManager's discards cannot find
        if (!path.isAbsolute()) {
            throw new IllegalConfigurationException(
                    "'"
                            + DfsChangelogOptions.BASE_PATH.key()
                            + "' must be an absolute path or URI (e.g. hdfs:///flink/dstl), but is '"
                            + base
                            + "'");
        }
        return path;
    }

    /**
     * Checks that Flink has a file system for the base path (its scheme's plugin is installed).
     * Creates no file or directory.
     *
     * @throws IOException naming the option and the path if it has none
     */
    public void checkBasePathFileSystem() throws IOException {
        try {
            basePath.getFileSystem();
        } catch (IOException e) {
            throw new IOException(
                    "No file system for '"
                            + DfsChangelogOptions.BASE_PATH.key()
                            + "' = "
                            + basePath
                            + ": "
                            + e.getMessage(),
                    e);
        }
    }

    /** Reads the settings of a restore-only view; the base path is not needed. */
    public static DfsChangelogSettings forReading(ReadableConfig config) {
        String base = config.get(DfsChangelogOptions.BASE_PATH);
        return read(config, base == null || base.isBlank() ? null : basePath(base));
    }

    private static DfsChangelogSettings read(ReadableConfig config, @Nullable Path base) {
        DfsChangelogSettings settings =
                new DfsChangelogSettings(
                        base,
                        config.get(DfsChangelogOptions.COMPRESSION_ENABLED),
                        config.get(DfsChangelogOptions.PERSIST_DELAY),
                        config.get(DfsChangelogOptions.CHECKPOINT_MAX_WAIT),
                        config.get(DfsChangelogOptions.PERSIST_SIZE_THRESHOLD).getBytes(),
                        config.get(DfsChangelogOptions.PREEMPTIVE_PERSIST_THRESHOLD).getBytes(),
                        config.get(DfsChangelogOptions.ENCODE_AHEAD_SIZE).getBytes(),
                        config.get(DfsChangelogOptions.MAX_IN_FLIGHT).getBytes(),
                        config.get(DfsChangelogOptions.UPLOAD_THREADS),
                        config.get(DfsChangelogOptions.UPLOAD_TIMEOUT),
                        config.get(DfsChangelogOptions.UPLOAD_HEDGE_ADAPTIVE),
                        config.get(DfsChangelogOptions.UPLOAD_HEDGE_MIN_DELAY),
                        config.get(DfsChangelogOptions.UPLOAD_HEDGE_INITIAL_DELAY),
                        config.get(DfsChangelogOptions.UPLOAD_DEADLINE),
                        config.get(DfsChangelogOptions.MAX_ATTEMPTS),
                        config.get(DfsChangelogOptions.RETRY_DELAY),
                        config.get(DfsChangelogOptions.DISCARD_THREADS),
                        config.get(DfsChangelogOptions.DOWNLOAD_THREADS),
                        config.get(DfsChangelogOptions.DOWNLOAD_CACHE_ENABLED),
                        config.get(DfsChangelogOptions.DOWNLOAD_CACHE_IDLE_TIMEOUT),
                        config.get(DfsChangelogOptions.DOWNLOAD_STALL_TIMEOUT),
                        config.get(CheckpointingOptions.MAX_RETAINED_CHECKPOINTS));
        // only a minimum the user set contradicts the timeout; the default one yields to it
        settings.validate(
                config.getOptional(DfsChangelogOptions.UPLOAD_HEDGE_MIN_DELAY).isPresent());
        return settings;
    }

    private void validate(boolean hedgeMinDelayExplicit) {
        positive(uploadThreads, DfsChangelogOptions.UPLOAD_THREADS.key());
        positive(maxAttempts, DfsChangelogOptions.MAX_ATTEMPTS.key());
        positive(discardThreads, DfsChangelogOptions.DISCARD_THREADS.key());
        positive(downloadThreads, DfsChangelogOptions.DOWNLOAD_THREADS.key());
        positive(uploadTimeout, DfsChangelogOptions.UPLOAD_TIMEOUT.key());
        positive(uploadDeadline, DfsChangelogOptions.UPLOAD_DEADLINE.key());
        positive(downloadStallTimeout, DfsChangelogOptions.DOWNLOAD_STALL_TIMEOUT.key());
        positive(encodeAheadBytes, DfsChangelogOptions.ENCODE_AHEAD_SIZE.key());
        // 0 would keep the storage unavailable after its first upload: Flink pauses the input
        positive(maxInFlightBytes, DfsChangelogOptions.MAX_IN_FLIGHT.key());
        // 0 would upload once per state change
        positive(
                preemptivePersistThreshold, DfsChangelogOptions.PREEMPTIVE_PERSIST_THRESHOLD.key());
        if (downloadCacheEnabled
                && (downloadCacheIdleTimeout.isZero() || downloadCacheIdleTimeout.isNegative())) {
            throw new IllegalConfigurationException(
                    "'"
                            + DfsChangelogOptions.DOWNLOAD_CACHE_IDLE_TIMEOUT.key()
                            + "' must be positive (a download is kept this long after its last"
                            + " reader; to keep none, disable the cache with '"
                            + DfsChangelogOptions.DOWNLOAD_CACHE_ENABLED.key()
                            + "')");
        }
        if (hedgeMinDelayExplicit && hedgeMinDelay.compareTo(uploadTimeout) > 0) {
            throw new IllegalConfigurationException(
                    "'"
                            + DfsChangelogOptions.UPLOAD_HEDGE_MIN_DELAY.key()
                            + "' ("
                            + hedgeMinDelay
                            + ") must not exceed '"
                            + DfsChangelogOptions.UPLOAD_TIMEOUT.key()
                            + "' ("
                            + uploadTimeout
                            + "), the longest an upload waits before it is hedged");
        }
        positive(retainedCheckpoints, CheckpointingOptions.MAX_RETAINED_CHECKPOINTS.key());
        notNegative(checkpointMaxWait, DfsChangelogOptions.CHECKPOINT_MAX_WAIT.key());
        notNegative(hedgeMinDelay, DfsChangelogOptions.UPLOAD_HEDGE_MIN_DELAY.key());
        notNegative(hedgeInitialDelay, DfsChangelogOptions.UPLOAD_HEDGE_INITIAL_DELAY.key());
        notNegative(persistDelay, DfsChangelogOptions.PERSIST_DELAY.key());
        notNegative(retryDelay, DfsChangelogOptions.RETRY_DELAY.key());
    }

    private static void positive(long value, String key) {
        if (value <= 0) {
            throw new IllegalConfigurationException(
                    "'" + key + "' must be positive, but is " + value);
        }
    }

    private static void positive(Duration value, String key) {
        if (value.isZero() || value.isNegative()) {
            throw new IllegalConfigurationException(
                    "'" + key + "' must be positive, but is " + value);
        }
    }

    private static void notNegative(Duration value, String key) {
        if (value.isNegative()) {
            throw new IllegalConfigurationException(
                    "'" + key + "' must not be negative, but is " + value);
        }
    }
}
