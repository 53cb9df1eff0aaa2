package io.github.flinkstate.disagg.engine.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.disagg.engine.testutil.AmongFailingThreads;
import io.github.flinkstate.testing.wait.Waits;
import java.net.SocketTimeoutException;
import java.nio.channels.ClosedByInterruptException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Loads that fail only because their own thread was interrupted never fail a thread that joined
 * them, however often they repeat. Found by the project's CI: {@code SstReadConcurrencyTest}'s
 * healthy reader joined the constantly interrupted reader's loads of one block four times in a row
 * on a slow machine and failed with the other thread's {@code ClosedByInterruptException} (a waiter
 * then retried at most three times, joining again each time).
 */
class CachedFileInterruptedLoadsTest {

    private static final int INTERRUPTED_LOADERS = 3;

    private final ExecutorService pool = Executors.newFixedThreadPool(INTERRUPTED_LOADERS + 1);

    @AfterEach
    void stopPool() throws Exception {
        pool.shutdownNow();
        assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    }

    /**
     * A load that fails with a socket timeout (an {@code InterruptedIOException} that no interrupt
     * caused) fails the thread that joined it too, instead of sending it to read again. From a
     * review: each waiter then read the block itself, waiting about twice the file system's timeout
     * and loading a DataNode that was already struggling.
     */
    @Test
    void aJoinedLoadThatTimedOut_failsTheWaiterToo_withoutASecondRead() throws Exception {
        BlockCache cache = new BlockCache(0);
        CachedFile file = cache.open("f", 1);
        AtomicInteger loads = new AtomicInteger();
        CountDownLatch joined = new CountDownLatch(1);
        Future<?> loader =
                pool.submit(
                        () ->
                                file.get(
                                        0,
                                        block -> {
                                            loads.incrementAndGet();
                                            try {
                                                joined.await();
                                            } catch (InterruptedException e) {
                                                throw new java.io.InterruptedIOException();
                                            }
                                            throw new SocketTimeoutException("read timed out");
                                        }));
        Waits.until("the first load runs", Duration.ofSeconds(30), () -> loads.get() == 1);
        Future<?> waiter =
                pool.submit(
                        () ->
                                file.get(
                                        0,
                                        block -> {
                                            loads.incrementAndGet();
                                            return new byte[] {1};
                                        }));
        Waits.until(
                "the second reader joins the load",
                Duration.ofSeconds(30),
                () -> cache.joinedLoadCount() == 1);
        joined.countDown();
        assertThatThrownBy(() -> loader.get(30, TimeUnit.SECONDS))
                .hasRootCauseInstanceOf(SocketTimeoutException.class);
        assertThatThrownBy(() -> waiter.get(30, TimeUnit.SECONDS))
                .hasRootCauseInstanceOf(SocketTimeoutException.class);
        assertThat(loads).as("one read of the block").hasValue(1);
    }

    @Test
    void aReaderAmongLoadsThatKeepFailingByInterrupt_alwaysGetsItsBlock() throws Exception {
        CachedFile file = new BlockCache(0).open("f", 1); // nothing cached: every get loads
        byte[] payload = {1, 2, 3};
        AmongFailingThreads.run( // the healthy reader never fails by another's interrupt
                pool,
                INTERRUPTED_LOADERS,
                () -> {
                    try {
                        file.get(
                                0,
                                block -> {
                                    LockSupport.parkNanos(200_000);
                                    throw new ClosedByInterruptException();
                                });
                    } catch (ClosedByInterruptException expected) {
                        // its own "interrupt"
                    }
                },
                () -> {
                    for (int i = 0; i < 2000; i++) {
                        assertThat(file.get(0, block -> payload.clone())).containsExactly(payload);
                    }
                    return null;
                });
    }
}
