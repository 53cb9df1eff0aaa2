package io.github.flinkstate.lru;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;

/** Configuration of the LRU cache state backend (FLIP-325). */
public final class LruCacheOptions {

    private LruCacheOptions() {}

    public static final ConfigOption<Integer> MAX_ENTRIES_NUM =
            ConfigOptions.key("state.backend.cache.max-entries-num")
                    .intType()
                    .defaultValue(0)
                    .withDescription(
                            "Maximum number of key/value pairs the object cache of each keyed state"
                                    + " backend (one per keyed operator subtask) holds; map state counts"
                                    + " one pair per user key. The cache is write-back with"
                                    + " least-recently-used eviction: an evicted entry that changed is"
                                    + " written to the delegate backend. 0 disables the cache and every"
                                    + " access goes straight to the delegate. Must not be negative.");

    public static final ConfigOption<String> DELEGATE =
            ConfigOptions.key("state.backend.cache.delegate")
                    .stringType()
                    .defaultValue("rocksdb")
                    .withDescription(
                            "The state backend behind the cache: 'rocksdb', 'hashmap', or the fully"
                                    + " qualified class name of a StateBackendFactory, as accepted by"
                                    + " 'state.backend.type'. All other configuration (for example"
                                    + " 'state.backend.rocksdb.*' or 'execution.checkpointing.incremental')"
                                    + " is passed through to it. The delegate must not be the LRU cache"
                                    + " itself or the changelog backend.");
}
