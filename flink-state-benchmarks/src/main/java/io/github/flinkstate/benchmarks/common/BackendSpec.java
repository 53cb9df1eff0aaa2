package io.github.flinkstate.benchmarks.common;

import io.github.flinkstate.lru.LruCacheOptions;
import io.github.flinkstate.lru.LruCacheStateBackendFactory;

import org.apache.flink.configuration.Configuration;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

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

    /** Parses "hashmap,rocksdb,lru:1000" style lists. */
    public static List<BackendSpec> parseList(String list) {
        List<BackendSpec> specs = new ArrayList<>();
        for (String item : list.split(",")) {
            String s = item.trim().toLowerCase();
            if (s.equals("hashmap")) {
                specs.add(hashMap());
            } else if (s.equals("rocksdb")) {
                specs.add(rocksDb());
            } else if (s.startsWith("lru:")) {
                specs.add(lruOverRocksDb(Integer.parseInt(s.substring(4))));
            } else if (!s.isEmpty()) {
                throw new IllegalArgumentException(
                        "Unknown backend '" + item + "'; use hashmap, rocksdb or lru:<entries>");
            }
        }
        return specs;
    }
}
