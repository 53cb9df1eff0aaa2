package io.github.flinkstate.lru.metrics;

import io.github.flinkstate.lru.cow.CowLruMap;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.metrics.groups.InternalOperatorMetricGroup;

/**
 * Registers the cache metrics of one keyed backend.
 *
 * <ul>
 *   <li>On the task: the gauge {@code stateCacheHitRatio} (FLIP-325), the hit ratio of all cached
 *       keyed backends of the task, averaged per second. Several operators of one task share a
 *       single gauge, which sums their counters.
 *   <li>On the operator, group {@code lruCache}: gauges {@code hits}, {@code misses}, {@code
 *       evictions}, {@code appendsNotAdmitted}, {@code updatesNotAdmitted}, {@code
 *       readsNotAdmitted}, {@code size} and {@code hitRatio}.
 * </ul>
 *
 * <p>Thread safety: registration is synchronized; gauges are read by reporter threads.
 */
public final class CacheMetrics {

    public static final String TASK_HIT_RATIO = "stateCacheHitRatio";

    private static final Map<MetricGroup, TaskHitRatio> TASK_GAUGES = new WeakHashMap<>();

    private CacheMetrics() {}

    public static void register(MetricGroup operatorGroup, CacheStatistics stats, CowLruMap cache) {
        MetricGroup group = operatorGroup.addGroup("lruCache");
        group.gauge("hits", (Gauge<Long>) stats::hits);
        group.gauge("misses", (Gauge<Long>) stats::misses);
        group.gauge("evictions", (Gauge<Long>) cache::evictions);
        group.gauge("appendsNotAdmitted", (Gauge<Long>) cache::blindWritesRefused);
        group.gauge("updatesNotAdmitted", (Gauge<Long>) cache::blindUpdatesRefused);
        group.gauge("readsNotAdmitted", (Gauge<Long>) cache::readsRefused);
        group.gauge("size", (Gauge<Integer>) cache::size);
        group.gauge("hitRatio", (Gauge<Double>) stats::hitRatioPerSecond);

        if (operatorGroup instanceof InternalOperatorMetricGroup) {
            MetricGroup task = ((InternalOperatorMetricGroup) operatorGroup).getTaskMetricGroup();
            if (task != null) {
                synchronized (TASK_GAUGES) {
                    TaskHitRatio ratio = TASK_GAUGES.get(task);
                    if (ratio == null) {
                        ratio = new TaskHitRatio();
                        TASK_GAUGES.put(task, ratio);
                        task.gauge(TASK_HIT_RATIO, ratio);
                    }
                    ratio.add(stats);
                }
                return;
            }
        }
        // no task group (e.g. tests with unregistered groups): report on the given group
        operatorGroup.gauge(TASK_HIT_RATIO, (Gauge<Double>) stats::hitRatioPerSecond);
    }

    /** The task-wide gauge: sums the counters of every cached backend of the task. */
    private static final class TaskHitRatio implements Gauge<Double> {
        private final CopyOnWriteArrayList<CacheStatistics> sources = new CopyOnWriteArrayList<>();
        private final CacheStatistics windowed = new CacheStatistics();
        private long lastHits;
        private long lastMisses;

        void add(CacheStatistics stats) {
            sources.add(stats);
        }

        @Override
        public synchronized Double getValue() {
            long hits = 0;
            long misses = 0;
            for (CacheStatistics s : sources) {
                hits += s.hits();
                misses += s.misses();
            }
            // feed the deltas into one windowed counter so the ratio is per second
            windowed.recordBulk(hits - lastHits, misses - lastMisses);
            lastHits = hits;
            lastMisses = misses;
            return windowed.hitRatioPerSecond();
        }
    }
}
