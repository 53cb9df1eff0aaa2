package io.github.flinkstate.benchmarks.common;

import io.github.flinkstate.changelog.ChangelogStateBackendFactory;
import io.github.flinkstate.changelog.DfsBatchedChangelogStorageFactory;
import io.github.flinkstate.changelog.DfsChangelogOptions;
import io.github.flinkstate.disagg.DisaggregatedStateBackendFactory;
import io.github.flinkstate.lru.LruCacheOptions;
import io.github.flinkstate.lru.LruCacheStateBackendFactory;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.apache.flink.configuration.Configuration;

/** A named state backend configuration used by the demo and the scenario runners. Immutable. */
public final class BackendSpec {

    private final String name;
    private final Consumer<Configuration> configurer;

    private BackendSpec(String name, Consumer<Configuration> configurer) {
        this.name = name;
        this.configurer = configurer;
    }

    public String name() {
        return name;
    }

    public void applyTo(Configuration config) {
        configurer.accept(config);
    }

    public static BackendSpec hashMap() {
        return new BackendSpec("hashmap", c -> c.setString("state.backend.type", "hashmap"));
    }

    public static BackendSpec rocksDb() {
        return new BackendSpec(
                "rocksdb",
                c -> {
                    c.setString("state.backend.type", "rocksdb");
                    c.setString("execution.checkpointing.incremental", "true");
                });
    }

    /**
     * RocksDB as {@link #rocksDb()}, restoring in Flink's IngestDB mode ({@code
     * state.backend.rocksdb.use-ingest-db-restore-mode}, FLIP-447): on rescaling, the SST files of
     * several source instances are clipped to the target key-group range and ingested instead of
     * re-inserting their records one by one.
     */
    public static BackendSpec rocksDbIngest() {
        return new BackendSpec(
                "rocksdb-ingest",
                c -> {
                    rocksDb().applyTo(c);
                    c.setString("state.backend.rocksdb.use-ingest-db-restore-mode", "true");
                });
    }

    /**
     * Our disaggregated backend ({@code DisaggregatedStateBackendFactory}) with its defaults: the
     * primary directory is a folder under the job's checkpoint directory, so checkpoints reference
     * the engine's files in place and restores open them in place.
     */
    public static BackendSpec disaggregated() {
        return new BackendSpec(
                "disaggregated",
                c ->
                        c.setString(
                                "state.backend.type",
                                DisaggregatedStateBackendFactory.class.getName()));
    }

    /**
     * Flink's ForSt backend as a disaggregated backend for the synchronous state API: its primary
     * directory (SST files) on the checkpoint directory ({@code state.backend.forst.primary-dir:
     * checkpoint-dir}, its default) and the synchronous API not forced onto the local disk ({@code
     * state.backend.forst.sync.enforce-local: false}; ForSt's default, true, makes it a local
     * RocksDB-like backend). Incremental checkpoints.
     */
    public static BackendSpec forSt() {
        return new BackendSpec(
                "forst",
                c -> {
                    c.setString("state.backend.type", "forst");
                    c.setString("state.backend.forst.primary-dir", "checkpoint-dir");
                    c.setString("state.backend.forst.sync.enforce-local", "false");
                    c.setString("execution.checkpointing.incremental", "true");
                });
    }

    /**
     * This spec with extra settings applied after its own, e.g. {@code
     * state.backend.rocksdb.memory.partitioned-index-filters=true}; the name gets them appended in
     * brackets. An empty map returns this spec.
     */
    public BackendSpec with(java.util.Map<String, String> settings) {
        if (settings.isEmpty()) {
            return this;
        }
        return new BackendSpec(
                name + settings.toString().replace('{', '[').replace('}', ']'),
                c -> {
                    configurer.accept(c);
                    settings.forEach(c::setString);
                });
    }

    /** Parses {@code "k1=v1;k2=v2"} (empty: no settings). */
    public static java.util.Map<String, String> parseSettings(String list) {
        java.util.Map<String, String> out = new java.util.LinkedHashMap<>();
        for (String item : list.split(";")) {
            if (item.isBlank()) {
                continue;
            }
            int eq = item.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("Expected key=value, got '" + item + "'");
            }
            out.put(item.substring(0, eq).trim(), item.substring(eq + 1).trim());
        }
        return out;
    }

    /** The LRU cache over RocksDB with the given number of entries per keyed backend. */
    public static BackendSpec lruOverRocksDb(int maxEntries) {
        return new BackendSpec(
                "lru(" + maxEntries + ")+rocksdb",
                c -> {
                    c.setString("state.backend.type", LruCacheStateBackendFactory.class.getName());
                    c.set(LruCacheOptions.MAX_ENTRIES_NUM, maxEntries);
                    c.set(LruCacheOptions.DELEGATE, "rocksdb");
                    c.setString("execution.checkpointing.incremental", "true");
                });
    }

    /**
     * Flink's ChangelogStateBackend with our {@code dfs-batched} DSTL on a local directory, over
     * the given delegate spec (rocksdb, hashmap or lru:N), materializing every second.
     */
    public static BackendSpec changelogOver(BackendSpec delegate) {
        return new BackendSpec(
                "changelog+" + delegate.name(),
                c -> {
                    delegate.applyTo(c);
                    String delegateType = c.getString("state.backend.type", "hashmap");
                    c.setString("state.backend.type", ChangelogStateBackendFactory.class.getName());
                    c.set(DfsChangelogOptions.DELEGATE, delegateType);
                    c.setString(
                            "state.changelog.storage",
                            DfsBatchedChangelogStorageFactory.IDENTIFIER);
                    // next to the checkpoints when they are set (one place to look and to
                    // delete), else a temporary directory
                    String checkpoints = c.getString("execution.checkpointing.dir", null);
                    c.set(
                            DfsChangelogOptions.BASE_PATH,
                            checkpoints != null
                                    ? checkpoints.replaceAll("/+$", "") + "/dstl"
                                    : tempDir("dstl").toURI().toString());
                    c.setString("state.changelog.periodic-materialize.interval", "1 s");
                });
    }

    private static File tempDir(String prefix) {
        try {
            return Files.createTempDirectory("flinkstate-" + prefix).toFile();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Parses "hashmap,rocksdb,rocksdb-ingest,disaggregated,forst,lru:1000,changelog:rocksdb,
     * changelog:lru:1000" style lists.
     */
    public static List<BackendSpec> parseList(String list) {
        List<BackendSpec> specs = new ArrayList<>();
        for (String item : list.split(",")) {
            String s = item.trim().toLowerCase();
            if (s.equals("hashmap")) {
                specs.add(hashMap());
            } else if (s.equals("rocksdb")) {
                specs.add(rocksDb());
            } else if (s.equals("rocksdb-ingest")) {
                specs.add(rocksDbIngest());
            } else if (s.equals("disaggregated")) {
                specs.add(disaggregated());
            } else if (s.equals("forst")) {
                specs.add(forSt());
            } else if (s.startsWith("changelog:")) {
                specs.add(changelogOver(parseList(s.substring("changelog:".length())).get(0)));
            } else if (s.startsWith("lru:")) {
                specs.add(lruOverRocksDb(Integer.parseInt(s.substring(4))));
            } else if (!s.isEmpty()) {
                throw new IllegalArgumentException(
                        "Unknown backend '"
                                + item
                                + "'; use hashmap, rocksdb, rocksdb-ingest, disaggregated, forst, "
                                + "lru:<entries> or changelog:<backend>");
            }
        }
        return specs;
    }
}
