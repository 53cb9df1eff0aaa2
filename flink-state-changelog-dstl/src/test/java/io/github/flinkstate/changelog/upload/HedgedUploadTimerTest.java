package io.github.flinkstate.changelog.upload;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.core.fs.Path;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * An upload whose result is decided leaves no hedging timer behind: the timer's task holds the
 * whole batch image until it fires, so an undecided-looking upload kept up to {@code
 * upload.timeout} worth of batches on the heap after they were uploaded (the in-flight limit had
 * already released their bytes). Found in a review.
 */
@Timeout(60)
class HedgedUploadTimerTest {

    @TempDir File tmp;

    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final ExecutorService uploads = Executors.newFixedThreadPool(2);

    @AfterEach
    void stop() {
        timer.shutdownNow();
        uploads.shutdownNow();
    }

    @Test
    void aDecidedUpload_leavesNoTimerHoldingItsImage() throws Exception {
        timer.setRemoveOnCancelPolicy(true); // as the storage's timer
        HedgedUpload upload = upload();
        FileStateHandle handle = upload.start().get(30, TimeUnit.SECONDS);
        assertThat(handle.getStateSize()).isEqualTo(1024);
        assertThat(timer.getQueue()).as("timers still holding the image").isEmpty();
    }

    @Test
    void anAbandonedUpload_leavesNoTimerHoldingItsImage() throws Exception {
        timer.setRemoveOnCancelPolicy(true);
        HedgedUpload upload = upload();
        upload.start();
        upload.abandon(new IOException("deadline"));
        assertThat(timer.getQueue()).as("timers still holding the image").isEmpty();
    }

    private HedgedUpload upload() {
        AtomicInteger files = new AtomicInteger();
        return new HedgedUpload(
                new byte[1024],
                () -> new Path(new File(tmp, "f" + files.incrementAndGet()).toURI()),
                uploads,
                timer,
                new HedgeDelay(
                        false, Duration.ofHours(1), Duration.ofHours(1), Duration.ofHours(1)),
                Duration.ofMillis(10),
                3,
                new UploadMetrics(new UnregisteredMetricsGroup(), () -> 0, () -> 0));
    }
}
