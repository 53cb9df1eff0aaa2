package io.github.flinkstate.disagg.backend.ttl;

import io.github.flinkstate.disagg.backend.KeyLayout;
import io.github.flinkstate.disagg.engine.compaction.CompactionFilter;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.runtime.state.ttl.TtlAwareSerializer;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;

/**
 * The engine's {@link CompactionFilter} of one keyed backend: drops the entries of TTL states whose
 * time-to-live has expired, judged with the backend's {@link TtlTimeProvider}, in every compaction
 * and memtable flush. One {@link TtlEntryRule} per registered state that asks for it, chosen by the
 * state id in the engine key ({@link KeyLayout}); entries of other states are kept.
 *
 * <p>A state gets a rule when it is registered with TTL enabled and cleanup in the background
 * ({@code StateTtlConfig.getCleanupStrategies().inRocksdbCompactFilter()}: the default {@code
 * cleanupInBackground}, or an explicit {@code cleanupInRocksdbCompactFilter(n[, time])}, whose
 * {@code n} is how many entries are judged per reading of the clock and whose {@code time} is the
 * state's periodic compaction time), exactly the states Flink's RocksDB backend filters in its
 * compactions. Registration first {@link #remove removes} a state's rule and installs the new one
 * only after the state's values were migrated to the new serializer, so a rule never judges values
 * of a format it was not made for (a run already going on keeps the rule it started with, which
 * matches the values it reads).
 *
 * <p>Thread safety: thread-safe. Rules are added and removed on the task thread; runs are created
 * by the flush and compaction threads and see a fixed copy of the rules; each run is confined to
 * its thread.
 */
public final class TtlCompactionFilters implements CompactionFilter.Factory {

    /** Entries judged per reading of the clock when the state's TTL config names no number. */
    static final long DEFAULT_QUERY_TIME_AFTER_NUM_ENTRIES = 1000;

    /** Lower bound of the periodic compaction time a state may ask for. */
    static final long MIN_PERIODIC_MILLIS = 60_000;

    private final TtlTimeProvider timeProvider;
    private final Map<Integer, TtlEntryRule> rules = new ConcurrentHashMap<>();

    public TtlCompactionFilters(TtlTimeProvider timeProvider) {
        this.timeProvider = timeProvider;
    }

    /**
     * Installs the rule of a state just registered with {@code desc} (its TTL config and, through
     * the descriptor's serializer, its value format), or none when the state does not ask for
     * cleanup in the background.
     */
    public void configure(int stateId, StateDescriptor<?, ?> desc) {
        TtlEntryRule rule = ruleOf(desc);
        if (rule == null) {
            rules.remove(stateId);
        } else {
            rules.put(stateId, rule);
        }
    }

    /** Stops filtering a state (before its values are migrated). */
    public void remove(int stateId) {
        rules.remove(stateId);
    }

    /** Whether entries of {@code stateId} are filtered (for tests). */
    public boolean filters(int stateId) {
        return rules.containsKey(stateId);
    }

    static TtlEntryRule ruleOf(StateDescriptor<?, ?> desc) {
        StateTtlConfig ttl = desc.getTtlConfig();
        if (!ttl.isEnabled()
                || !ttl.getCleanupStrategies().inRocksdbCompactFilter()
                || !TtlAwareSerializer.isSerializerTtlEnabled(desc.getSerializer())) {
            return null;
        }
        StateTtlConfig.RocksdbCompactFilterCleanupStrategy strategy =
                ttl.getCleanupStrategies().getRocksdbCompactFilterCleanupStrategy();
        long queryAfter =
                strategy == null
                        ? DEFAULT_QUERY_TIME_AFTER_NUM_ENTRIES
                        : Math.max(1, strategy.getQueryTimeAfterNumEntries());
        long periodic =
                strategy == null || strategy.getPeriodicCompactionTime() == null
                        ? -1
                        : Math.max(0, strategy.getPeriodicCompactionTime().toMillis());
        boolean map = desc.getType() == StateDescriptor.Type.MAP;
        return new TtlEntryRule(
                map ? 1 : 0, map, ttl.getTimeToLive().toMillis(), queryAfter, periodic);
    }

    /**
     * The shortest periodic compaction time any filtered state asks for: its own ({@code
     * cleanupInRocksdbCompactFilter(n, time)}, 0 = none for that state), else the backend's option
     * ({@code configured}); 0 when no state asks for one. At least {@link #MIN_PERIODIC_MILLIS}, so
     * that rewritten files do not come due again while the rewrite still runs.
     */
    @Override
    public long periodicCompactionMillis(long configured) {
        long min = 0;
        for (TtlEntryRule r : rules.values()) {
            long p = r.periodicCompactionMillis() < 0 ? configured : r.periodicCompactionMillis();
            if (p > 0 && (min == 0 || p < min)) {
                min = p;
            }
        }
        return min == 0 ? 0 : Math.max(min, MIN_PERIODIC_MILLIS);
    }

    /** True while some registered state is filtered. */
    @Override
    public boolean active() {
        return !rules.isEmpty();
    }

    @Override
    public CompactionFilter newRun() {
        if (rules.isEmpty()) {
            return null;
        }
        return new Run(Map.copyOf(rules));
    }

    /**
     * One compaction or flush: the rules as they were at its start, and its reading of the clock.
     */
    private final class Run implements CompactionFilter {
        private final Map<Integer, TtlEntryRule> rules;
        private long now = timeProvider.currentTimestamp();
        private long judged;

        Run(Map<Integer, TtlEntryRule> rules) {
            this.rules = rules;
        }

        @Override
        public boolean drop(byte[] key, byte[] value) {
            if (key.length < KeyLayout.HEADER_BYTES) {
                return false;
            }
            TtlEntryRule rule = rules.get(KeyLayout.stateIdOf(key));
            if (rule == null) {
                return false;
            }
            if (++judged % rule.queryTimeAfterNumEntries() == 0) {
                now = timeProvider.currentTimestamp();
            }
            return rule.expired(value, now);
        }
    }
}
