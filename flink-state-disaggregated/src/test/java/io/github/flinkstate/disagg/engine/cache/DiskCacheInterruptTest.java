package io.github.flinkstate.disagg.engine.cache;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An interrupted thread never costs the local disk tier a unit, nor other threads their hits: the
 * unit's file channel is shared, and a channel read or write on an interrupted thread closes it for
 * everyone. From a review: an aborted canonical savepoint (Flink interrupts its thread) dropped the
 * slab its thread read, up to 64 MiB of cached blocks, and paused every local-cache write for 10 s.
 */
class DiskCacheInterruptTest {

    private static final int BLOCK = 4096;

    @TempDir File tmp;

    private final ExecutorService pool = Executors.newFixedThreadPool(2);
    private DiskCache cache;

    @AfterEach
    void close() throws Exception {
        pool.shutdownNow();
        assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
        if (cache != null) {
            cache.close();
        }
    }

    private static byte[] block(int seed) {
        byte[] b = new byte[BLOCK];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void readsAndOffersOfAnInterruptedThread_dropNothing() throws Exception {
        cache = new DiskCache(new File(tmp, "cache"), 4 << 20, 0);
        byte[] b = block(1);
        cache.offer("f", 0, b);
        Thread.currentThread().interrupt();
        try {
            cache.read("f", 0, BLOCK); // a miss, at worst
            cache.offer("f", BLOCK, block(2));
        } finally {
            Thread.interrupted();
        }
        assertThat(cache.read("f", 0, BLOCK)).isEqualTo(b);
        assertThat(cache.invalidationCount()).isZero();
        assertThat(cache.writeFailureCount()).isZero();
        cache.offer("f", BLOCK, block(2)); // writes are not paused
        assertThat(cache.read("f", BLOCK, BLOCK)).isEqualTo(block(2));
    }

    @Test
    void aThreadInterruptedOverAndOver_costsOthersNeitherTheUnitNorTheirHits() throws Exception {
        cache = new DiskCache(new File(tmp, "cache"), 4 << 20, 0);
        for (int i = 0; i < 8; i++) {
            cache.offer("f", (long) i * BLOCK, block(i));
        }
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Thread> victim = new AtomicReference<>();
        Future<?> interrupted =
                pool.submit(
                        () -> {
                            victim.set(Thread.currentThread());
                            for (int i = 0; !stop.get(); i++) {
                                cache.read("f", (long) (i % 8) * BLOCK, BLOCK);
                                cache.offer("g", (long) (i % 64) * BLOCK, block(i));
                                Thread.interrupted();
                            }
                            return null;
                        });
        AtomicInteger hits = new AtomicInteger();
        Future<?> other =
                pool.submit(
                        () -> {
                            for (int i = 0; i < 20_000; i++) {
                                byte[] got = cache.read("f", (long) (i % 8) * BLOCK, BLOCK);
                                if (got != null) {
                                    assertThat(got).isEqualTo(block(i % 8));
                                    hits.incrementAndGet();
                                }
                            }
                            return null;
                        });
        Waits.until(
                "the interrupted reader runs", Duration.ofSeconds(30), () -> victim.get() != null);
        while (!other.isDone()) {
            victim.get().interrupt();
            Thread.onSpinWait();
        }
        stop.set(true);
        other.get();
        interrupted.get();
        assertThat(cache.invalidationCount()).as("units dropped").isZero();
        assertThat(cache.writeFailureCount()).as("write failures").isZero();
        for (int i = 0; i < 8; i++) {
            assertThat(cache.read("f", (long) i * BLOCK, BLOCK)).isEqualTo(block(i));
        }
        assertThat(hits.get()).isPositive();
    }
}
