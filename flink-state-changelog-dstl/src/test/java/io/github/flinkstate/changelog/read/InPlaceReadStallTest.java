package io.github.flinkstate.changelog.read;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.changelog.DfsChangelogOptions;
import io.github.flinkstate.changelog.format.SegmentChanges;
import io.github.flinkstate.changelog.testutils.TestStorages;
import java.io.File;
import java.io.IOException;
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
 * restoring task's own thread read the file and waited as long as the file system did. The stall
 * clock is one for all reads in place and restarts when a read starts, so a read queued behind
 * reads that progress is not given up; a read waiting when the view closes, and one after the
 * close, fail at once with an IOException naming the file. The timeouts run the tests on threads of
 * their own, so that a hang fails them instead of the build.
 */
class InPlaceReadStallTest {

    @TempDir File tmp;

    private final ExecutorService executor = Executors.newFixedThreadPool(2);

    @AfterEach
    void stopExecutor() throws Exception {
        executor.shutdownNow();
        assertThat(executor.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    }

    /** One segment holding the change "a change", and its file. */
    private Tuple2<StreamStateHandle, Long> writeSegment() throws Exception {
        return TestStorages.writeOneSegment(
                new Path(new File(tmp, "dfs").toURI()), new File(tmp, "w"), "a change");
    }

    /**
     * A segment whose file, behind {@code hanging}, stalls on its first opened stream until {@code
     * stalled} opens ({@link StallingStream#onFirstOpen}).
     */
    private record Hanging(
            Tuple2<StreamStateHandle, Long> segment,
            FileStateHandle written,
            FileStateHandle hanging,
            CountDownLatch reading,
            CountDownLatch stalled,
            AtomicInteger opens) {}

    private Hanging hangingSegment() throws Exception {
        Tuple2<StreamStateHandle, Long> segment = writeSegment();
        FileStateHandle written = (FileStateHandle) segment.f0;
        CountDownLatch reading = new CountDownLatch(1);
        CountDownLatch stalled = new CountDownLatch(1);
        AtomicInteger opens = new AtomicInteger();
        return new Hanging(
                segment,
                written,
                StallingStream.onFirstOpen(written, reading, stalled, opens),
                reading,
                stalled,
                opens);
    }

    @Test
    @Timeout(value = 1, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aStalledReadInPlace_failsAfterTheStallTimeout_andTheNextReadWorks() throws Exception {
        Hanging h = hangingSegment();
        InPlaceReads reads = new InPlaceReads(executor, Duration.ofSeconds(1));
        DfsChangelogReader reader = new DfsChangelogReader(null, reads);
        try {
            assertThatThrownBy(() -> reader.readSegment(h.hanging(), h.segment().f1))
                    .hasMessageContaining(h.written().getFilePath().getName())
                    .hasMessageContaining(DfsChangelogOptions.DOWNLOAD_STALL_TIMEOUT.key());
            assertThat(h.reading().getCount()).as("the first read reached the stream").isZero();

            try (SegmentChanges changes = reader.readSegment(h.hanging(), h.segment().f1)) {
                assertThat(h.opens()).hasValue(2);
                StateChange change = changes.next();
                assertThat(new String(change.getChange(), StandardCharsets.UTF_8))
                        .isEqualTo("a change");
            }
        } finally {
            h.stalled()
                    .countDown(); // the stalled read returns; its segment is closed, not returned
        }
    }

    /**
     * The stall clock is one for all reads in place and restarts when a read starts: a read queued
     * behind a slow read that keeps receiving bytes is not given up, however long it queues. From a
     * review: each read's clock started at its submission, so reads queued behind others on the
     * download threads failed, blaming a file system that was only busy.
     */
    @Test
    @Timeout(value = 1, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aReadQueuedBehindAReadThatProgresses_isNotGivenUp() throws Exception {
        Tuple2<StreamStateHandle, Long> segment = writeSegment();
        FileStateHandle written = (FileStateHandle) segment.f0;
        AtomicInteger slowReads = new AtomicInteger();
        FileStateHandle slow = StallingStream.slow(written, Duration.ofMillis(400), slowReads);
        ExecutorService one = Executors.newSingleThreadExecutor();
        try {
            InPlaceReads reads = new InPlaceReads(one, Duration.ofMillis(600));
            DfsChangelogReader reader = new DfsChangelogReader(null, reads);
            ExecutorService callers = Executors.newFixedThreadPool(1);
            try {
                var first = callers.submit(() -> reader.readSegment(slow, segment.f1));
                Thread.sleep(50); // the slow read takes the only download thread
                try (SegmentChanges queued = reader.readSegment(written, segment.f1)) {
                    assertThat(slowReads.get())
                            .as("the second read queued behind two 400 ms reads, past the timeout")
                            .isGreaterThanOrEqualTo(2);
                    assertThat(new String(queued.next().getChange(), StandardCharsets.UTF_8))
                            .isEqualTo("a change");
                }
                first.get().close();
            } finally {
                callers.shutdownNow();
            }
        } finally {
            one.shutdownNow();
        }
    }

    /**
     * A read waiting when the view closes (its download threads stopped) fails at once, naming the
     * closed view, and a read after the close is refused the same way, with an {@link IOException}.
     * Before, the waiting read waited out the stall timeout (a queued read dropped by the
     * executor's shutdown never completes) and a later read failed with an unchecked rejection that
     * named no file.
     */
    @Test
    @Timeout(value = 1, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void readsWhenTheViewCloses_failAtOnce() throws Exception {
        Hanging h = hangingSegment();
        ExecutorService one = Executors.newSingleThreadExecutor();
        ExecutorService callers = Executors.newFixedThreadPool(2);
        try {
            InPlaceReads reads = new InPlaceReads(one, Duration.ofMinutes(10));
            DfsChangelogReader reader = new DfsChangelogReader(null, reads);
            var blocked = callers.submit(() -> reader.readSegment(h.hanging(), h.segment().f1));
            assertThat(h.reading().await(30, TimeUnit.SECONDS)).isTrue();
            var queued = callers.submit(() -> reader.readSegment(h.written(), h.segment().f1));
            Thread.sleep(100); // queued behind the stalled read
            one.shutdownNow(); // what closing the view does
            assertThatThrownBy(queued::get)
                    .hasCauseInstanceOf(IOException.class)
                    .hasMessageContaining("closed")
                    .hasMessageContaining(h.written().getFilePath().getName());
            assertThatThrownBy(() -> reader.readSegment(h.written(), h.segment().f1))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("closed")
                    .hasMessageContaining(h.written().getFilePath().getName());
            assertThatThrownBy(blocked::get).hasMessageContaining("closed");
        } finally {
            h.stalled().countDown();
            callers.shutdownNow();
        }
    }
}
