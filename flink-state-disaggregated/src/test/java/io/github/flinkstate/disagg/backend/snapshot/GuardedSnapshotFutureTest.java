package io.github.flinkstate.disagg.backend.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.StateUtil;
import org.apache.flink.runtime.state.memory.ByteStreamStateHandle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * How a snapshot's future treats Flink's discard (cancel, then get) and the close of the backend's
 * snapshot registry, which only stops a running snapshot.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class GuardedSnapshotFutureTest {

    private final AtomicInteger reductions = new AtomicInteger();

    private static SnapshotResult<KeyedStateHandle> handle() {
        return SnapshotResult.of(
                new IncrementalRemoteKeyedStateHandle(
                        UUID.randomUUID(),
                        KeyGroupRange.of(0, 1),
                        1L,
                        List.of(),
                        List.of(),
                        new ByteStreamStateHandle("meta", new byte[1]),
                        1L));
    }

    private GuardedSnapshotFuture future(Runnable onDone) {
        return new GuardedSnapshotFuture(
                GuardedSnapshotFutureTest::handle,
                full -> {
                    reductions.incrementAndGet();
                    return full;
                },
                onDone,
                () -> {});
    }

    @Test
    void flinksDiscardOfAFinishedSnapshot_givesItsFilesBack() throws Exception {
        GuardedSnapshotFuture f = future(() -> {});
        f.run();
        assertThat(f.cancel(true)).isFalse();
        f.get();
        assertThat(reductions).hasValue(1);
    }

    /**
     * The snapshot's result is already out (Flink's checkpoint thread returned from {@code get} and
     * acknowledges it) but {@code done()}, which unregisters the future from the registry, has not
     * run yet; a registry close in that window gave the files back to the store, which the dispose
     * then deleted.
     */
    @Test
    void registryCloseAfterTheResultWasTaken_givesNothingBack() throws Exception {
        CountDownLatch inDone = new CountDownLatch(1);
        CountDownLatch leaveDone = new CountDownLatch(1);
        GuardedSnapshotFuture f =
                future(
                        () -> {
                            inDone.countDown();
                            awaitQuietly(leaveDone);
                        });
        Thread async = new Thread(f::run, "async-part");
        async.start();
        assertThat(inDone.await(10, TimeUnit.SECONDS)).isTrue();
        SnapshotResult<KeyedStateHandle> sent = f.get(); // the result Flink acknowledges
        f.onRegistryClose(); // the task is disposed meanwhile
        leaveDone.countDown();
        async.join();
        assertThat(sent.getJobManagerOwnedSnapshot()).isNotNull();
        assertThat(reductions).as("files given back to the store").hasValue(0);
    }

    @Test
    void registryCloseWhileRunning_cancelsTheSnapshot() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        GuardedSnapshotFuture f =
                new GuardedSnapshotFuture(
                        () -> {
                            running.countDown();
                            awaitQuietly(release);
                            return handle();
                        },
                        full -> {
                            reductions.incrementAndGet();
                            return full;
                        },
                        () -> {},
                        () -> {});
        Thread async = new Thread(f::run, "async-part");
        async.start();
        assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
        f.onRegistryClose();
        assertThat(f.isCancelled()).isTrue();
        release.countDown();
        async.join();
        assertThat(reductions)
                .as("the late result of the cancelled snapshot is discarded here")
                .hasValue(1);
        // Flink's discard of the future afterwards (cancel, then get) is a quiet no-op; the
        // second cancel threw a CancellationException from its get (found in a review)
        StateUtil.discardStateFuture(f);
        assertThat(reductions).hasValue(1);
    }

    private static void awaitQuietly(CountDownLatch latch) {
        boolean interrupted = false;
        while (true) {
            try {
                latch.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
