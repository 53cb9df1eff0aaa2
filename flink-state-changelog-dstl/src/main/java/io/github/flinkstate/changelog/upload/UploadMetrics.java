package io.github.flinkstate.changelog.upload;

import java.util.function.LongSupplier;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.ThreadSafeSimpleCounter;
import org.apache.flink.runtime.metrics.DescriptiveStatisticsHistogram;

/**
 * The DSTL's metrics, registered under {@code <job>.dstl.dfs-batched} of the TaskManager job metric
 * group: upload latency, batch size, attempts, hedges, failures and bytes in flight.
 *
 * <p>Thread safety: thread-safe; counters are {@link ThreadSafeSimpleCounter}s and histogram
 * updates happen under this object's lock.
 */
public final class UploadMetrics {

    public static final String GROUP = "dstl";
    public static final String SUBGROUP = "dfs-batched";

    private final Histogram uploadLatencyMillis;
    private final Histogram batchSizeBytes;
    private final Histogram batchChangeSets;
    private final Counter attempts;
    private final Counter hedgedAttempts;
    private final Counter attemptFailures;
    private final Counter uploadFailures;
    private final Counter uploadedBytes;

    public UploadMetrics(
            MetricGroup parent, LongSupplier inFlightBytes, LongSupplier hedgeDelayMillis) {
        MetricGroup group = parent.addGroup(GROUP).addGroup(SUBGROUP);
        this.uploadLatencyMillis =
                group.histogram("uploadLatencyMillis", new DescriptiveStatisticsHistogram(1000));
        this.batchSizeBytes =
                group.histogram("uploadBatchSizeBytes", new DescriptiveStatisticsHistogram(1000));
        this.batchChangeSets =
                group.histogram("uploadBatchChangeSets", new DescriptiveStatisticsHistogram(1000));
        this.attempts = group.counter("uploadAttempts", new ThreadSafeSimpleCounter());
        this.hedgedAttempts = group.counter("uploadHedgedAttempts", new ThreadSafeSimpleCounter());
        this.attemptFailures =
                group.counter("uploadAttemptFailures", new ThreadSafeSimpleCounter());
        this.uploadFailures = group.counter("uploadFailures", new ThreadSafeSimpleCounter());
        this.uploadedBytes = group.counter("uploadedBytes", new ThreadSafeSimpleCounter());
        group.gauge("inFlightBytes", (Gauge<Long>) inFlightBytes::getAsLong);
        group.gauge("uploadHedgeDelayMillis", (Gauge<Long>) hedgeDelayMillis::getAsLong);
    }

    void attemptStarted(boolean hedge) {
        attempts.inc();
        if (hedge) {
            hedgedAttempts.inc();
        }
    }

    void attemptFailed() {
        attemptFailures.inc();
    }

    synchronized void batchSucceeded(long latencyMillis, long fileBytes, int changeSets) {
        uploadLatencyMillis.update(latencyMillis);
        batchSizeBytes.update(fileBytes);
        batchChangeSets.update(changeSets);
        uploadedBytes.inc(fileBytes);
    }

    void batchFailed() {
        uploadFailures.inc();
    }

    public long attempts() {
        return attempts.getCount();
    }

    public long hedgedAttempts() {
        return hedgedAttempts.getCount();
    }

    public long uploadFailures() {
        return uploadFailures.getCount();
    }

    public long attemptFailures() {
        return attemptFailures.getCount();
    }
}
