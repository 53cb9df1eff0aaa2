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

    public static final ConfigOption<Boolean> COPY_VALUES_ON_WRITE =
            ConfigOptions.key("state.backend.cache.copy-values-on-write")
                    .booleanType()
                    .defaultValue(false)
                    .withDescription(
                            "Whether the cache stores a copy (made with the state's serializer) of"
                                    + " every value a job writes (ValueState#update, ListState#add,"
                                    + " #addAll and #update, MapState#put and #putAll, and their user"
                                    + " keys, ReducingState#add) instead of the object itself. Off: the"
                                    + " object is stored by reference, exactly as with the HashMap"
                                    + " backend, so a job must not change or reuse an object after"
                                    + " writing it to state (RocksDB serializes it at once, so jobs"
                                    + " written for RocksDB sometimes do). On: such jobs are safe; each"
                                    + " write costs one copy of a mutable value (immutable types such"
                                    + " as String and Long are never copied). Reads return the cached"
                                    + " object in both modes.");

    public static final ConfigOption<Boolean> SCAN_RESISTANCE =
            ConfigOptions.key("state.backend.cache.scan-resistance")
                    .booleanType()
                    .defaultValue(true)
                    .withDescription(
                            "Whether a full cache stops caching most reads that miss while reads"
                                    + " hardly ever hit (fewer than 1 in 16 over the last"
                                    + " max(max-entries-num, 1024) reads of value, reducing,"
                                    + " aggregating and map state): then only one miss in 8 is"
                                    + " cached, the"
                                    + " others are read from and written to the delegate directly,"
                                    + " and after 8 such windows one window caches every miss again"
                                    + " to look whether plain LRU now hits. It keeps a key cycle"
                                    + " longer than the cache from costing an insert, an eviction and"
                                    + " a write-back per record, and lets the cached sample hit. Off:"
                                    + " every miss is cached (plain LRU).");

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
