package io.github.flinkstate.changelog.read;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.testing.wait.Waits;
import java.io.Closeable;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Abandoned reads are closed off the reading thread, by a bounded number of threads: on a hung file
 * system whose closes hang as well (HDFS's close waits for the blocked read), every restore attempt
 * abandons reads, and one new thread per read piled up for as long as the hang lasted.
 */
class ReadUtilsCloseTest {

    @Test
    void closesThatHang_takeABoundedNumberOfThreads_andAllRunOnceReleased() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger closed = new AtomicInteger();
        int streams = 40;
        for (int i = 0; i < streams; i++) {
            Closeable hangingClose =
                    () -> {
                        try {
                            release.await();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                        closed.incrementAndGet();
                    };
            ReadUtils.closeOnAnotherThread(hangingClose);
        }
        try {
            Waits.until(
                    "closing threads started",
                    Duration.ofSeconds(20),
                    () -> closingThreads() >= ReadUtils.MAX_CLOSING_THREADS);
            Thread.sleep(200); // any further thread would have started by now
            assertThat(closingThreads()).isEqualTo(ReadUtils.MAX_CLOSING_THREADS);
        } finally {
            release.countDown();
        }
        Waits.until("every close ran", Duration.ofSeconds(20), () -> closed.get() == streams);
    }

    private static long closingThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith("dstl-abandoned-"))
                .count();
    }
}
