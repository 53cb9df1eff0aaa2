package io.github.flinkstate.disagg.engine.testutil;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Runs a healthy task while other threads repeat rounds whose failures are their own (a load that
 * fails by its thread's interrupt, say), for tests that the healthy task never fails because of
 * them. Stateless.
 */
public final class AmongFailingThreads {

    /** One round of a failing thread; it catches its own expected failure. */
    @FunctionalInterface
    public interface Round {
        void run() throws Exception;
    }

    private AmongFailingThreads() {}

    /**
     * Runs {@code healthy} on {@code pool} while {@code others} threads of it repeat {@code round};
     * rethrows (as an {@code ExecutionException}) what {@code healthy} threw, then stops the others
     * and rethrows what a round did not catch. {@code pool} needs {@code others + 1} threads.
     */
    public static void run(ExecutorService pool, int others, Round round, Callable<?> healthy)
            throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        List<Future<?>> failing = new ArrayList<>();
        for (int t = 0; t < others; t++) {
            failing.add(
                    pool.submit(
                            () -> {
                                while (!stop.get()) {
                                    round.run();
                                }
                                return null;
                            }));
        }
        try {
            pool.submit(healthy).get(60, TimeUnit.SECONDS);
        } finally {
            stop.set(true);
        }
        for (Future<?> f : failing) {
            f.get(30, TimeUnit.SECONDS);
        }
    }
}
