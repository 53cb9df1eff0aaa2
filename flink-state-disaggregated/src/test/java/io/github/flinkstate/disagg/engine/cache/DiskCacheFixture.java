package io.github.flinkstate.disagg.engine.cache;

import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the tests of one {@link DiskCache} share: a temporary directory, the cache under test
 * (closed after each test), sizes and reproducible random contents.
 */
abstract class DiskCacheFixture {

    static final int KB = 1024;
    static final long MB = 1 << 20;

    @TempDir File tmp;

    /** The cache under test, if a test opened one; closed after each test. */
    DiskCache cache;

    @AfterEach
    void closeCache() {
        if (cache != null) {
            cache.close();
        }
    }

    /** Runs {@code tasks} on threads of their own and waits for all (rethrowing a failure). */
    static void runAtOnce(List<Callable<Void>> tasks) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(tasks.size());
        try {
            List<Future<Void>> done = new ArrayList<>();
            for (Callable<Void> task : tasks) {
                done.add(pool.submit(task));
            }
            for (Future<Void> f : done) {
                f.get(2, TimeUnit.MINUTES);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** {@code length} random bytes, the same for the same seed. */
    static byte[] randomBytes(int seed, int length) {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        return b;
    }
}
