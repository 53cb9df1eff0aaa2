package io.github.flinkstate.benchmarks.common;

import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;

/**
 * An in-process metric reporter that sums the LRU cache's {@code lruCache.hits} and {@code
 * lruCache.misses} gauges of every subtask, including subtasks that ended (their last values are
 * read when Flink removes the metric). Registered through {@code metrics.reporter.*}.
 *
 * <p>Thread safety: static, concurrent state; call {@link #reset()} between jobs.
 */
public final class CacheMetricsCollector implements MetricReporter {

    private static final Map<Gauge<?>, String> LIVE = new ConcurrentHashMap<>();
    private static final AtomicLong HITS = new AtomicLong();
    private static final AtomicLong MISSES = new AtomicLong();

    public static void reset() {
        LIVE.clear();
        HITS.set(0);
        MISSES.set(0);
    }

    /** Hit ratio over all subtasks and attempts so far, or NaN if no cache was used. */
    public static double hitRatio() {
        long hits = HITS.get();
        long misses = MISSES.get();
        for (Map.Entry<Gauge<?>, String> e : LIVE.entrySet()) {
            long v = ((Number) e.getKey().getValue()).longValue();
            if (e.getValue().equals("hits")) {
                hits += v;
            } else {
                misses += v;
            }
        }
        return hits + misses == 0 ? Double.NaN : (double) hits / (hits + misses);
    }

    @Override
    public void open(MetricConfig config) {}

    @Override
    public void close() {}

    private static String kind(String metricName, MetricGroup group) {
        if (!group.getMetricIdentifier(metricName).contains("lruCache.")) {
            return null;
        }
        return metricName.equals("hits") || metricName.equals("misses") ? metricName : null;
    }

    @Override
    public void notifyOfAddedMetric(Metric metric, String metricName, MetricGroup group) {
        String kind = kind(metricName, group);
        if (kind != null && metric instanceof Gauge) {
            LIVE.put((Gauge<?>) metric, kind);
        }
    }

    @Override
    public void notifyOfRemovedMetric(Metric metric, String metricName, MetricGroup group) {
        String kind = LIVE.remove(metric);
        if (kind != null) {
            long v = ((Number) ((Gauge<?>) metric).getValue()).longValue();
            (kind.equals("hits") ? HITS : MISSES).addAndGet(v);
        }
    }

    /** Factory for {@code metrics.reporter.<name>.factory.class}. */
    public static final class Factory implements MetricReporterFactory {
        @Override
        public MetricReporter createMetricReporter(Properties properties) {
            return new CacheMetricsCollector();
        }
    }
}
