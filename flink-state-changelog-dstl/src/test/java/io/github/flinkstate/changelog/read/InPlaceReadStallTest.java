package io.github.flinkstate.changelog.read;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.changelog.DfsChangelogOptions;
import io.github.flinkstate.changelog.format.SegmentChanges;
import io.github.flinkstate.changelog.testutils.TestStorages;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.changelog.StateChange;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * With the local download cache off, segments are read in place on a download thread, and a read
 * from a file system that stops answering fails after the stall timeout, naming the file and the
 * option, even when the stream behaves like HDFS's (a read that ignores interrupts, a close that
 * waits for the read); the read after it opens the file again and returns the change. Before, the
 * restoring task's own thread read the file and waited as long as the file system did. The timeout
 * runs the test on a thread of its own, so that a hang fails it instead of the build.
 */
class InPlaceReadStallTest {

    @TempDir File tmp;

    private final ExecutorService executor = Executors.newFixedThreadPool(2);

    @AfterEach
    void stopExecutor() throws Exception {
        executor.shutdownNow();
        assertThat(executor.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    @Timeout(value = 1, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aStalledReadInPlace_failsAfterTheStallTimeout_andTheNextReadWorks() throws Exception {
        Tuple2<StreamStateHandle, Long> segment =
                TestStorages.writeOneSegment(
                        new Path(new File(tmp, "dfs").toURI()), new File(tmp, "w"), "a change");
        FileStateHandle written = (FileStateHandle) segment.f0;
        CountDownLatch stalled = new CountDownLatch(1);
        CountDownLatch reading = new CountDownLatch(1);
        AtomicInteger opens = new AtomicInteger();
        FileStateHandle hanging = StallingStream.onFirstOpen(written, reading, stalled, opens);
        InPlaceReads reads = new InPlaceReads(executor, Duration.ofSeconds(1));
        DfsChangelogReader reader = new DfsChangelogReader(null, reads);
        try {
            assertThatThrownBy(() -> reader.readSegment(hanging, segment.f1))
                    .hasMessageContaining(written.getFilePath().getName())
                    .hasMessageContaining(DfsChangelogOptions.DOWNLOAD_STALL_TIMEOUT.key());
            assertThat(reading.getCount()).as("the first read reached the stream").isZero();

            try (SegmentChanges changes = reader.readSegment(hanging, segment.f1)) {
                assertThat(opens).hasValue(2);
                StateChange change = changes.next();
                assertThat(new String(change.getChange(), StandardCharsets.UTF_8))
                        .isEqualTo("a change");
            }
        } finally {
            stalled.countDown(); // the stalled read returns; its segment is closed, not returned
        }
    }
}
