package io.github.flinkstate.disagg.backend;

import io.github.flinkstate.disagg.DisaggregatedOptions;
import io.github.flinkstate.disagg.engine.sst.BlockCompression;
import java.io.File;
import java.io.IOException;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.runtime.state.CheckpointStorageAccess;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.filesystem.FsCheckpointStorageAccess;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The options of one keyed backend, resolved against its task: where the primary directory is (the
 * configured one, else a folder under the job's checkpoint directory, else the local working
 * directory), and the engine and memory sizes.
 *
 * <p>Thread safety: immutable.
 *
 * @param primaryDir directory of this backend's engine files (one folder per operator)
 * @param localDir local working directory
 * @param memtableBytes the largest memtable
 * @param blockCacheBytes a block cache of this backend's own, or 0: the slot's shared one
 * @param slotMemoryBytes the heap shared by the slot's backends (block cache and memtables)
 * @param writeBufferRatio the memtables' share of {@code slotMemoryBytes}
 * @param rowCacheRatio the share of the block cache that the row caches may take
 * @param periodicCompactionMillis age after which a file is rewritten for the TTL compaction filter
 *     (0: never)
 * @param copyThreads files copied at once for a full checkpoint after a NO_CLAIM restore
 * @param compression compression of the data blocks of new engine files
 * @param localCacheBytes capacity of the local disk cache, 0 for none (resolved: 0 also when the
 *     option is not set and the primary directory is not on a distributed file system)
 * @param localCacheReserveBytes free space the local disk cache leaves on its file system
 * @param localCacheWarmUp whether a restore starts copying its files into the local disk cache
 * @param localCacheWarmUpHint whether snapshots record what the caches hold, for the warm-up
 * @param localCacheMmap whether the local disk cache reads its whole-file copies through memory
 *     mappings
 * @param warmUpBytesPerSecond the warm-up's read rate limit, 0 for none
 * @param readaheadBytes the largest read of consecutive blocks by compactions and long scans
 * @param compactionBytesPerSecond the compaction I/O rate limit, 0 for none
 * @param backgroundCopy whether inherited restored files are copied into this job's directory in
 *     the background ({@code DisaggregatedOptions.BACKGROUND_COPY})
 * @param claimConfigured whether the configured claim mode is CLAIM: the background copy then
 *     copies only the restored files that no checkpoint may name where they are (relative handles),
 *     the others being the job's own
 */
public record BackendSettings(
        Path primaryDir,
        File localDir,
        long memtableBytes,
        long blockCacheBytes,
        long slotMemoryBytes,
        double writeBufferRatio,
        double rowCacheRatio,
        int backgroundThreads,
        long periodicCompactionMillis,
        int copyThreads,
        BlockCompression compression,
        long localCacheBytes,
        long localCacheReserveBytes,
        boolean localCacheWarmUp,
        boolean localCacheWarmUpHint,
        boolean localCacheMmap,
        long warmUpBytesPerSecond,
        int readaheadBytes,
        long compactionBytesPerSecond,
        boolean backgroundCopy,
        boolean claimConfigured) {

    private static final Logger LOG = LoggerFactory.getLogger(BackendSettings.class);

    /** Resolves the options for the keyed backend of {@code parameters}. */
    public static BackendSettings resolve(
            ReadableConfig options,
            Environment env,
            StateBackend.KeyedStateBackendParameters<?> parameters)
            throws IOException {
        File localDir =
                options.getOptional(DisaggregatedOptions.LOCAL_DIRECTORY)
                        .map(DisaggregatedOptions::localDirectory)
                        .orElseGet(() -> defaultLocalDir(env));
        String operator = sanitize(parameters.getOperatorIdentifier());
        Path base =
                options.getOptional(DisaggregatedOptions.PRIMARY_DIRECTORY)
                        .map(Path::new)
                        .orElse(null);
        if (base == null) {
            base = checkpointDirectory(env);
        }
        if (base == null) {
            base = Path.fromLocalFile(new File(localDir, "disaggregated-primary"));
            LOG.warn(
                    "No file-system checkpoint storage and no '{}': the primary copy of the state"
                            + " is kept in the local directory {} and does not survive the loss of"
                            + " this machine.",
                    DisaggregatedOptions.PRIMARY_DIRECTORY.key(),
                    base);
        }
        Path primary = new Path(base, operator);
        FileSystem fs = primary.getFileSystem();
        fs.mkdirs(primary);
        return new BackendSettings(
                primary,
                localDir,
                options.get(DisaggregatedOptions.MEMTABLE_SIZE).getBytes(),
                options.getOptional(DisaggregatedOptions.BLOCK_CACHE_SIZE)
                        .map(MemorySize::getBytes)
                        .orElse(0L),
                options.get(DisaggregatedOptions.MEMORY_PER_SLOT).getBytes(),
                options.get(DisaggregatedOptions.WRITE_BUFFER_RATIO),
                options.get(DisaggregatedOptions.ROW_CACHE_RATIO),
                options.get(DisaggregatedOptions.BACKGROUND_THREADS),
                options.get(DisaggregatedOptions.TTL_PERIODIC_COMPACTION_TIME).toMillis(),
                options.get(DisaggregatedOptions.COPY_THREADS),
                options.get(DisaggregatedOptions.COMPRESSION),
                options.getOptional(DisaggregatedOptions.LOCAL_CACHE_SIZE).isPresent()
                                || fs.isDistributedFS()
                        ? options.get(DisaggregatedOptions.LOCAL_CACHE_SIZE).getBytes()
                        : 0,
                options.get(DisaggregatedOptions.LOCAL_CACHE_RESERVE).getBytes(),
                options.get(DisaggregatedOptions.LOCAL_CACHE_WARM_UP),
                options.get(DisaggregatedOptions.LOCAL_CACHE_WARM_UP_HINT),
                options.get(DisaggregatedOptions.LOCAL_CACHE_MMAP),
                options.get(DisaggregatedOptions.LOCAL_CACHE_WARM_UP_RATE_LIMIT).getBytes(),
                (int) options.get(DisaggregatedOptions.READAHEAD_SIZE).getBytes(),
                options.get(DisaggregatedOptions.COMPACTION_RATE_LIMIT).getBytes(),
                options.get(DisaggregatedOptions.BACKGROUND_COPY),
                options.getOptional(StateRecoveryOptions.RESTORE_MODE)
                                .orElse(RecoveryClaimMode.NO_CLAIM)
                        == RecoveryClaimMode.CLAIM);
    }

    private static Path checkpointDirectory(Environment env) {
        try {
            CheckpointStorageAccess access = env.getCheckpointStorageAccess();
            if (access instanceof FsCheckpointStorageAccess) {
                return new Path(
                        ((FsCheckpointStorageAccess) access).getCheckpointsDirectory(),
                        "disaggregated");
            }
        } catch (RuntimeException e) {
            LOG.debug("No checkpoint storage access in this environment", e);
        }
        return null;
    }

    private static File defaultLocalDir(Environment env) {
        try {
            String[] dirs = env.getIOManager().getSpillingDirectoriesPaths();
            if (dirs.length > 0) {
                return new File(dirs[0]);
            }
        } catch (RuntimeException e) {
            LOG.debug("No IO manager directories in this environment", e);
        }
        return new File(System.getProperty("java.io.tmpdir"));
    }

    private static String sanitize(String operatorIdentifier) {
        String s = operatorIdentifier.replaceAll("[^A-Za-z0-9_.-]", "_");
        return s.length() > 80 ? s.substring(0, 80) : s;
    }
}
