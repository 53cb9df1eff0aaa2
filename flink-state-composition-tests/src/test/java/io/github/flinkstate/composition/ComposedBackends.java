package io.github.flinkstate.composition;

import io.github.flinkstate.changelog.ChangelogStateBackendFactory;
import io.github.flinkstate.changelog.DfsBatchedChangelogStorage;
import io.github.flinkstate.changelog.DfsChangelogOptions;
import io.github.flinkstate.disagg.DisaggregatedOptions;
import io.github.flinkstate.disagg.DisaggregatedStateBackendFactory;
import io.github.flinkstate.lru.LruCacheOptions;
import io.github.flinkstate.lru.LruCacheStateBackendFactory;
import java.io.File;
import java.io.IOException;
import java.time.Duration;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.StateChangelogOptions;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.metrics.groups.UnregisteredMetricGroups;
import org.apache.flink.runtime.state.LocalRecoveryConfig;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.StateBackendLoader;
import org.apache.flink.runtime.state.changelog.StateChangelogStorage;
import org.apache.flink.runtime.state.changelog.StateChangelogStorageLoader;

/**
 * Builds the stacked backends the way a cluster does: a Flink {@link Configuration} with {@code
 * state.backend.type} naming the outer factory and the wrapper's delegate option naming the
 * disaggregated backend's factory, loaded by Flink's {@link StateBackendLoader}; the changelog
 * storage by Flink's {@link StateChangelogStorageLoader} from the same configuration, as a
 * TaskManager loads it.
 *
 * <p>The disaggregated backend gets its own primary directory and the smallest memtable (64 KiB),
 * so that its engine writes and reads files in most suite cases.
 *
 * <p>Thread safety: stateless.
 */
final class ComposedBackends {

    static final String DISAGGREGATED = DisaggregatedStateBackendFactory.class.getName();

    private ComposedBackends() {}

    /** The disaggregated backend's options, files under {@code dir}. */
    static Configuration disaggregated(File dir) {
        Configuration config = new Configuration();
        config.set(
                DisaggregatedOptions.PRIMARY_DIRECTORY,
                new Path(new File(dir, "primary").toURI()).toString());
        config.set(DisaggregatedOptions.MEMTABLE_SIZE, MemorySize.parse("64kb"));
        return config;
    }

    /** {@code state.backend.type: <the disaggregated factory>}: the backend on its own. */
    static Configuration disaggregatedAlone(File dir) {
        Configuration config = disaggregated(dir);
        config.set(StateBackendOptions.STATE_BACKEND, DISAGGREGATED);
        return config;
    }

    /**
     * {@code state.backend.type: <our changelog factory>}, {@code state.backend.changelog.delegate:
     * <the disaggregated factory>}, {@code state.changelog.storage: dfs-batched} (our DSTL, files
     * under {@code dir}, persisted at once instead of batched).
     */
    static Configuration changelogOverDisaggregated(File dir) {
        Configuration config = disaggregated(dir);
        config.set(StateBackendOptions.STATE_BACKEND, ChangelogStateBackendFactory.class.getName());
        config.set(DfsChangelogOptions.DELEGATE, DISAGGREGATED);
        config.set(StateChangelogOptions.STATE_CHANGE_LOG_STORAGE, "dfs-batched");
        config.set(
                DfsChangelogOptions.BASE_PATH, new Path(new File(dir, "dstl").toURI()).toString());
        config.set(DfsChangelogOptions.PERSIST_DELAY, Duration.ZERO);
        return config;
    }

    /**
     * As {@link #changelogOverDisaggregated}, with the LRU cache between the changelog backend and
     * the disaggregated one: {@code state.backend.changelog.delegate: <the LRU cache factory>},
     * {@code state.backend.cache.delegate: <the disaggregated factory>}.
     */
    static Configuration changelogOverLruCacheOverDisaggregated(File dir, int maxEntries) {
        Configuration config = changelogOverDisaggregated(dir);
        config.set(DfsChangelogOptions.DELEGATE, LruCacheStateBackendFactory.class.getName());
        config.set(LruCacheOptions.DELEGATE, DISAGGREGATED);
        config.set(LruCacheOptions.MAX_ENTRIES_NUM, maxEntries);
        return config;
    }

    /**
     * {@code state.backend.type: <the LRU cache factory>}, {@code state.backend.cache.delegate:
     * <the disaggregated factory>}, {@code state.backend.cache.max-entries-num: maxEntries}.
     */
    static Configuration lruCacheOverDisaggregated(File dir, int maxEntries) {
        Configuration config = disaggregated(dir);
        config.set(StateBackendOptions.STATE_BACKEND, LruCacheStateBackendFactory.class.getName());
        config.set(LruCacheOptions.DELEGATE, DISAGGREGATED);
        config.set(LruCacheOptions.MAX_ENTRIES_NUM, maxEntries);
        return config;
    }

    /** The backend {@code config} names, loaded as Flink loads a job's state backend. */
    static StateBackend load(Configuration config) throws Exception {
        return StateBackendLoader.loadStateBackendFromConfig(
                config, ComposedBackends.class.getClassLoader(), null);
    }

    /** The changelog storage {@code config} names, loaded as a TaskManager loads it. */
    static StateChangelogStorage<?> changelogStorage(Configuration config) throws IOException {
        return StateChangelogStorageLoader.load(
                new JobID(),
                config,
                UnregisteredMetricGroups.createUnregisteredTaskManagerJobMetricGroup(),
                LocalRecoveryConfig.BACKUP_AND_RECOVERY_DISABLED);
    }

    /**
     * Closes a changelog storage and, for ours, waits until its uploads and deletions stopped
     * ({@code close()} never waits): a hedged upload still running would write into the test's
     * temporary directory while JUnit deletes it.
     */
    static void closeAndAwait(StateChangelogStorage<?> storage) throws Exception {
        storage.close();
        if (storage instanceof DfsBatchedChangelogStorage ours
                && !ours.awaitBackgroundWork(Duration.ofSeconds(60))) {
            throw new AssertionError("uploads or deletions still running 60 s after close");
        }
    }
}
