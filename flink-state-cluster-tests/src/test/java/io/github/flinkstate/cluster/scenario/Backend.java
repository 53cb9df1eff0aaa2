package io.github.flinkstate.cluster.scenario;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The backends the scenarios run, each as the job configuration a user would write (factory class
 * names, not code): our LRU cache over RocksDB, Flink's changelog backend on our {@code
 * dfs-batched} DSTL over RocksDB and over the LRU cache, the disaggregated backend with its primary
 * directory on HDFS (a scenario is skipped if a backend's factory is not in {@code lib/}), and
 * stock RocksDB as the other side of savepoint switches.
 *
 * <p>The DSTL itself ({@code state.changelog.storage}, base path) is TaskManager configuration and
 * is in the cluster's {@code config.yaml}.
 */
public enum Backend {
    LRU_ROCKSDB(
            "lru-cache over RocksDB", "io.github.flinkstate.lru.LruCacheStateBackendFactory", true),
    CHANGELOG_ROCKSDB(
            "changelog (dfs-batched DSTL) over RocksDB",
            "io.github.flinkstate.changelog.ChangelogStateBackendFactory",
            false),
    CHANGELOG_LRU(
            "changelog (dfs-batched DSTL) over lru-cache over RocksDB",
            "io.github.flinkstate.changelog.ChangelogStateBackendFactory",
            false),
    DISAGGREGATED(
            "disaggregated (primary copy on HDFS)",
            "io.github.flinkstate.disagg.DisaggregatedStateBackendFactory",
            true),
    ROCKSDB("stock RocksDB (incremental)", null, true);

    /** LRU entries per keyed backend: fewer than the job's keyed state, so entries are evicted. */
    static final int CACHE_ENTRIES = 100;

    private final String description;
    private final String factoryClass;
    private final boolean noClaimRestore;

    Backend(String description, String factoryClass, boolean noClaimRestore) {
        this.description = description;
        this.factoryClass = factoryClass;
        this.noClaimRestore = noClaimRestore;
    }

    public String description() {
        return description;
    }

    /** The factory class that must be in {@code lib/}, or null for a Flink built-in backend. */
    public String factoryClass() {
        return factoryClass;
    }

    /**
     * Whether the backend can resume in NO_CLAIM mode. Flink's changelog backend cannot
     * (FLINK-38307); our changelog factory rejects such a restore with advice instead.
     */
    public boolean supportsNoClaimRestore() {
        return noClaimRestore;
    }

    /**
     * The backend's job configuration; {@code scenarioDir} is the scenario's HDFS directory URI.
     */
    public Map<String, String> jobConfig(String scenarioDir) {
        Map<String, String> c = new LinkedHashMap<>();
        c.put("execution.checkpointing.incremental", "true");
        switch (this) {
            case LRU_ROCKSDB -> lru(c);
            case CHANGELOG_ROCKSDB -> {
                c.put("state.backend.type", factoryClass);
                c.put("state.backend.changelog.delegate", "rocksdb");
                c.put("state.changelog.periodic-materialize.interval", "3s");
            }
            case CHANGELOG_LRU -> {
                c.put("state.backend.type", factoryClass);
                c.put("state.backend.changelog.delegate", LRU_ROCKSDB.factoryClass);
                c.put("state.backend.cache.delegate", "rocksdb");
                c.put("state.backend.cache.max-entries-num", Integer.toString(CACHE_ENTRIES));
                c.put("state.changelog.periodic-materialize.interval", "3s");
            }
            case DISAGGREGATED -> {
                c.put("state.backend.type", factoryClass);
                c.put("state.backend.disaggregated.primary-dir", scenarioDir + "/primary");
            }
            case ROCKSDB -> c.put("state.backend.type", "rocksdb");
        }
        return c;
    }

    private void lru(Map<String, String> c) {
        c.put("state.backend.type", factoryClass);
        c.put("state.backend.cache.delegate", "rocksdb");
        c.put("state.backend.cache.max-entries-num", Integer.toString(CACHE_ENTRIES));
    }
}
