package io.github.flinkstate.benchmarks.jmh;

import io.github.flinkstate.changelog.DfsBatchedChangelogStorage;
import io.github.flinkstate.changelog.DfsChangelogOptions;
import io.github.flinkstate.changelog.DfsChangelogSettings;
import io.github.flinkstate.disagg.DisaggregatedOptions;
import io.github.flinkstate.disagg.DisaggregatedStateBackend;
import io.github.flinkstate.lru.StateBackendWrapperWithLRUCache;
import java.io.File;
import java.io.IOException;
import java.lang.reflect.Constructor;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import org.apache.flink.api.common.JobID;
import org.apache.flink.changelog.fs.FsStateChangelogOptions;
import org.apache.flink.changelog.fs.FsStateChangelogStorage;
import org.apache.flink.changelog.fs.TaskChangelogRegistry;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.Path;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.metrics.groups.UnregisteredMetricGroups;
import org.apache.flink.runtime.state.LocalRecoveryConfig;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.changelog.StateChangelogStorage;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.state.forst.ForStOptions;
import org.apache.flink.state.forst.ForStStateBackend;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.util.concurrent.ExecutorThreadFactory;

/**
 * The state backends the JMH state benchmarks compare, selected by the {@code backend}
 * {@code @Param}.
 *
 * <p>The LRU variants wrap RocksDB in {@link StateBackendWrapperWithLRUCache}. Their size is a
 * fraction of the cache entries the benchmark can touch ({@code workingSetEntries}: keys times
 * entries per key, map state counting one entry per user key). With the uniformly random keys of
 * {@link StateWorkload} the hit ratio of reads is about that fraction:
 *
 * <ul>
 *   <li>{@code LRU_0}: 1/1000 of the working set (at least one entry): about 0% hits, every access
 *       goes through RocksDB plus the cache's miss path;
 *   <li>{@code LRU_50}: half of the working set: about 50% hits;
 *   <li>{@code LRU_100}: twice the working set, so the set-up keys and all new keys of the "add"
 *       operations fit: 100% hits, nothing is ever evicted.
 * </ul>
 *
 * <p>The changelog variants are Flink's {@code ChangelogStateBackend} over RocksDB, with periodic
 * materialization off (the benchmarks measure the per-operation cost of logging changes, not
 * materialization). Each writes its changes to a DSTL in a local temporary directory, with that
 * DSTL's default settings:
 *
 * <ul>
 *   <li>{@code CHANGELOG_FS}: Flink's own {@code filesystem} DSTL ({@link
 *       FsStateChangelogStorage});
 *   <li>{@code CHANGELOG_DFS_BATCHED}: our {@code dfs-batched} DSTL ({@link
 *       DfsBatchedChangelogStorage}).
 * </ul>
 *
 * <p>The disaggregated variants, each with its defaults:
 *
 * <ul>
 *   <li>{@code DISAGGREGATED}: our {@link DisaggregatedStateBackend}; its primary directory is its
 *       default, a folder under the job's checkpoint directory, which the fixture puts on the local
 *       file system, and its local working directory is {@code dbDir};
 *   <li>{@code DISAGGREGATED_NO_ROW_CACHE}: the same with its row cache off ({@code
 *       state.backend.disaggregated.memory.row-cache-ratio: 0}), to measure what the row cache
 *       gives;
 *   <li>{@code FORST}: Flink's {@link ForStStateBackend} with its defaults: the synchronous state
 *       API is forced local ({@code state.backend.forst.sync.enforce-local: true}), so its SST
 *       files live in {@code dbDir} (its local directory), as RocksDB's do.
 * </ul>
 */
public enum BenchmarkBackend {
    HASHMAP,
    ROCKSDB,
    LRU_0,
    LRU_50,
    LRU_100,
    CHANGELOG_FS,
    CHANGELOG_DFS_BATCHED,
    DISAGGREGATED,
    DISAGGREGATED_NO_ROW_CACHE,
    FORST;

    /**
     * Runs the discards of Flink's changelog registry on a daemon thread, so forks exit promptly.
     */
    private static final Executor DISCARD_EXECUTOR =
            Executors.newSingleThreadExecutor(new ExecutorThreadFactory("jmh-changelog-discard"));

    /**
     * A new, unconfigured backend instance.
     *
     * @param dbDir local directory for RocksDB's, ForSt's and the disaggregated engine's working
     *     files (unused by HASHMAP)
     * @param workingSetEntries cache entries the benchmark can touch (sizes the LRU variants)
     */
    public StateBackend create(File dbDir, long workingSetEntries) {
        switch (this) {
            case HASHMAP:
                return new HashMapStateBackend();
            case ROCKSDB:
                return rocksDb(dbDir);
            case CHANGELOG_FS:
            case CHANGELOG_DFS_BATCHED:
                return changelog(rocksDb(dbDir));
            case DISAGGREGATED:
                return new DisaggregatedStateBackend()
                        .with(DisaggregatedOptions.LOCAL_DIRECTORY, dbDir.getAbsolutePath());
            case DISAGGREGATED_NO_ROW_CACHE:
                return new DisaggregatedStateBackend()
                        .with(DisaggregatedOptions.LOCAL_DIRECTORY, dbDir.getAbsolutePath())
                        .with(DisaggregatedOptions.ROW_CACHE_RATIO, 0.0);
            case FORST:
                return forSt(dbDir);
            default:
                return new StateBackendWrapperWithLRUCache(
                        rocksDb(dbDir), cacheEntries(workingSetEntries));
        }
    }

    /** The LRU cache size for this variant, or 0 for the plain backends. */
    public int cacheEntries(long workingSetEntries) {
        long entries;
        switch (this) {
            case LRU_0:
                entries = Math.max(1, workingSetEntries / 1000);
                break;
            case LRU_50:
                entries = Math.max(1, workingSetEntries / 2);
                break;
            case LRU_100:
                entries = 2 * workingSetEntries;
                break;
            default:
                return 0;
        }
        return (int) Math.min(Integer.MAX_VALUE, entries);
    }

    /**
     * Whether this variant is Flink's changelog backend (it needs a {@link
     * #createChangelogStorage}).
     */
    public boolean isChangelog() {
        return this == CHANGELOG_FS || this == CHANGELOG_DFS_BATCHED;
    }

    /**
     * A new changelog storage (DSTL) for this changelog variant, writing under {@code dir}; the
     * caller closes it after the keyed backend.
     */
    public StateChangelogStorage<?> createChangelogStorage(JobID jobId, File dir)
            throws IOException {
        switch (this) {
            case CHANGELOG_FS:
                {
                    Configuration config = new Configuration();
                    config.set(FsStateChangelogOptions.BASE_PATH, new Path(dir.toURI()).toString());
                    // Flink's shortcut constructor starts a non-daemon discard pool that close()
                    // never
                    // stops, which kept every JMH fork alive for 30 s after its last iteration.
                    return new FsStateChangelogStorage(
                            jobId,
                            config,
                            UnregisteredMetricGroups.createUnregisteredTaskManagerJobMetricGroup(),
                            TaskChangelogRegistry.defaultChangelogRegistry(DISCARD_EXECUTOR),
                            LocalRecoveryConfig.BACKUP_AND_RECOVERY_DISABLED);
                }
            case CHANGELOG_DFS_BATCHED:
                {
                    Configuration config = new Configuration();
                    config.set(DfsChangelogOptions.BASE_PATH, new Path(dir.toURI()).toString());
                    File localTmp = new File(dir, "local");
                    if (!localTmp.mkdirs() && !localTmp.isDirectory()) {
                        throw new IOException("Cannot create " + localTmp);
                    }
                    return new DfsBatchedChangelogStorage(
                            jobId,
                            DfsChangelogSettings.forWriting(config),
                            new UnregisteredMetricsGroup(),
                            LocalRecoveryConfig.BACKUP_AND_RECOVERY_DISABLED,
                            localTmp);
                }
            default:
                throw new IllegalStateException(this + " is not a changelog backend");
        }
    }

    /**
     * Flink's {@code ChangelogStateBackend} over {@code delegate}. Its constructor is
     * package-private; Flink itself builds it reflectively (StateBackendLoader), and so do we.
     */
    private static StateBackend changelog(StateBackend delegate) {
        try {
            Constructor<?> constructor =
                    Class.forName("org.apache.flink.state.changelog.ChangelogStateBackend")
                            .getDeclaredConstructor(StateBackend.class);
            constructor.setAccessible(true);
            return (StateBackend) constructor.newInstance(delegate);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("Cannot create Flink's ChangelogStateBackend", e);
        }
    }

    private static StateBackend forSt(File dbDir) {
        Configuration config = new Configuration();
        config.set(ForStOptions.LOCAL_DIRECTORIES, dbDir.getAbsolutePath());
        return new ForStStateBackend().configure(config, BenchmarkBackend.class.getClassLoader());
    }

    private static StateBackend rocksDb(File dbDir) {
        EmbeddedRocksDBStateBackend rocks = new EmbeddedRocksDBStateBackend(true);
        rocks.setDbStoragePath(dbDir.getAbsolutePath());
        return rocks;
    }
}
