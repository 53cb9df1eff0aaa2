package io.github.flinkstate.benchmarks.scenario.rescale;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.traces.Span;
import org.apache.flink.traces.reporter.TraceReporter;
import org.apache.flink.traces.reporter.TraceReporterFactory;

/**
 * An in-process trace reporter that keeps the attributes of Flink's {@code JobInitialization}
 * spans. Flink's checkpoint stats tracker emits one such span when every subtask of a job that
 * restored a checkpoint has reported its {@code SubTaskInitializationMetrics}; its attributes are
 * the maximum and sum over the subtasks of each duration metric ({@code maxRestoreStateDurationMs},
 * {@code maxDownloadStateDurationMs}, {@code maxInitializeStateDurationMs}, ...) and of the
 * restored bytes per location ({@code sumRestoredStateSizeBytes.REMOTE}, ...), plus the {@code
 * checkpointId}. Registered through {@code traces.reporter.<name>.factory.class}.
 *
 * <p>Thread safety: static, concurrent state; {@link #reset()} before each verify job.
 */
public final class InitializationSpans implements TraceReporter {

    static final String SPAN_NAME = "JobInitialization";

    private static final List<Map<String, Object>> SPANS = new CopyOnWriteArrayList<>();

    public static void reset() {
        SPANS.clear();
    }

    /**
     * The numeric attributes of the span that restored {@code checkpointId}, or null if none yet.
     */
    public static Map<String, Long> forCheckpoint(long checkpointId) {
        for (Map<String, Object> attributes : SPANS) {
            Object id = attributes.get("checkpointId");
            if (id instanceof Number n && n.longValue() == checkpointId) {
                Map<String, Long> numbers = new TreeMap<>();
                attributes.forEach(
                        (k, v) -> {
                            if (v instanceof Number x) {
                                numbers.put(k, x.longValue());
                            }
                        });
                return numbers;
            }
        }
        return null;
    }

    @Override
    public void open(MetricConfig config) {}

    @Override
    public void close() {}

    @Override
    public void notifyOfAddedSpan(Span span) {
        if (SPAN_NAME.equals(span.getName())) {
            SPANS.add(new HashMap<>(span.getAttributes()));
        }
    }

    /** Factory for {@code traces.reporter.<name>.factory.class} (listed in META-INF/services). */
    public static final class Factory implements TraceReporterFactory {
        @Override
        public TraceReporter createTraceReporter(Properties properties) {
            return new InitializationSpans();
        }
    }
}
