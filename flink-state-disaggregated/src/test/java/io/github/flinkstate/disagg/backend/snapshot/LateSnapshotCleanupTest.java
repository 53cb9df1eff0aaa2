package io.github.flinkstate.disagg.backend.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.backend.DisaggregatedKeyedStateBackend;
import io.github.flinkstate.disagg.backend.testutil.DisaggBackends;
import io.github.flinkstate.disagg.backend.testutil.KeyedFixture;
import io.github.flinkstate.disagg.backend.testutil.LocalDirs;
import io.github.flinkstate.testing.checkpoint.ForwardingOutputStream;
import io.github.flinkstate.testing.checkpoint.ForwardingStreamFactory;
import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import io.github.flinkstate.testing.fs.Latency;
import java.io.File;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RunnableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.state.CheckpointStateOutputStream;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.CheckpointedStateScope;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.StateUtil;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A task cancelled around a checkpoint's asynchronous part must leave no file behind, whatever the
 * order in which Flink cancels the snapshot and disposes the backend:
 *
 * <ul>
 *   <li>The snapshot is cancelled while its asynchronous part runs, and the part still finishes (an
 *       upload that ignores the interrupt, as HDFS clients can): Java's {@code FutureTask} drops
 *       such a result silently, so the engine files it handed over and its meta stream must be
 *       cleaned up by the future itself. Before the fix the flushed file and the meta stream
 *       stayed, and the store, believing Flink owned the file, did not delete it on dispose.
 *   <li>The snapshot finished, the backend was disposed, and only then did Flink discard the result
 *       (the task's asynchronous checkpoint was closed after its operators): the files went back to
 *       a store that had already closed, and nobody deleted them.
 * </ul>
 *
 * Found by the cluster tests' leftover check (a disaggregated rescale scenario left one engine file
 * of a cancelled job that no checkpoint referenced).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LateSnapshotCleanupTest {

    @TempDir File tmp;

    @Test
    void cancelledWhileRunning_resultProducedAnyway_leavesNoFile() throws Exception {
        KeyedFixture fixture = new KeyedFixture(200);
        try (DisaggBackends backends = backends()) {
            DisaggregatedKeyedStateBackend<Integer> b =
                    backends.create(DisaggBackends.ALL, List.of());
            fixture.write(b, 1);
            SlowCloseStreams streams =
                    new SlowCloseStreams(LocalDirs.checkpointLocation(new File(tmp, "chk"), 1));
            RunnableFuture<SnapshotResult<KeyedStateHandle>> f =
                    b.snapshot(
                            1, 0L, streams, CheckpointOptions.forCheckpointWithDefaultLocation());
            Thread async = new Thread(f::run, "async-part");
            async.start();
            assertThat(streams.closing.await(30, TimeUnit.SECONDS))
                    .as("the meta stream is being closed")
                    .isTrue();

            StateUtil.discardStateFuture(f); // Flink cancels the running snapshot
            assertThat(f.isCancelled()).isTrue();
            streams.release.countDown(); // ... and its upload completes nevertheless
            async.join(TimeUnit.SECONDS.toMillis(30));
            assertThat(async.isAlive()).isFalse();

            backends.dispose(b);
            assertThat(files("primary")).as("engine files left").isEmpty();
            assertThat(files("chk")).as("checkpoint files left").isEmpty();
        }
    }

    /**
     * A checkpoint's handle is discarded on the TaskManager only after a later checkpoint completed
     * (its asynchronous part finished, but the task's checkpoint failed later, e.g. on another
     * operator's snapshot, while the JobManager had aborted it on a timeout and gone on), and the
     * store had compacted the file it flushed away meanwhile. Before, the completion made the store
     * forget the older checkpoint's files, so the discard gave nothing back and the file stayed.
     */
    @Test
    void discardedAfterALaterCheckpointCompleted_leavesNoFile() throws Exception {
        KeyedFixture fixture = new KeyedFixture(200);
        try (DisaggBackends backends = backends()) {
            DisaggregatedKeyedStateBackend<Integer> b =
                    backends.create(DisaggBackends.ALL, List.of());
            RunnableFuture<SnapshotResult<KeyedStateHandle>> first = writeAndCheckpoint(b, fixture);
            List<String> namedByFirst = fileNames(first);
            b.notifyCheckpointAborted(1);

            fixture.write(b, 2);
            b.compactAll(); // checkpoint 1's files leave the store
            RunnableFuture<SnapshotResult<KeyedStateHandle>> second = checkpoint(b, 2);
            List<String> namedBySecond = fileNames(second);
            b.notifyCheckpointComplete(2);

            StateUtil.discardStateFuture(first); // checkpoint 1 failed on this TaskManager
            List<String> onlyFirst = new ArrayList<>(namedByFirst);
            onlyFirst.removeAll(namedBySecond);
            assertThat(onlyFirst).as("files only checkpoint 1 named").isNotEmpty();
            List<String> left =
                    files("primary").stream()
                            .map(f -> new File(f).getName())
                            .collect(Collectors.toList());
            assertThat(left).doesNotContainAnyElementsOf(onlyFirst);
            backends.dispose(b);
        }
    }

    /** Names of the engine files a snapshot's handle names. */
    private static List<String> fileNames(RunnableFuture<SnapshotResult<KeyedStateHandle>> f)
            throws Exception {
        IncrementalRemoteKeyedStateHandle h =
                (IncrementalRemoteKeyedStateHandle) f.get().getJobManagerOwnedSnapshot();
        return h.getSharedState().stream()
                .map(e -> ((FileStateHandle) e.getHandle()).getFilePath().getName())
                .collect(Collectors.toList());
    }

    @Test
    void discardedAfterDispose_leavesNoFile() throws Exception {
        KeyedFixture fixture = new KeyedFixture(200);
        try (DisaggBackends backends = backends()) {
            DisaggregatedKeyedStateBackend<Integer> b =
                    backends.create(DisaggBackends.ALL, List.of());
            RunnableFuture<SnapshotResult<KeyedStateHandle>> f = writeAndCheckpoint(b, fixture);
            assertThat(files("primary")).as("the checkpoint flushed a file").isNotEmpty();

            backends.dispose(b); // the operators close first ...
            StateUtil.discardStateFuture(f); // ... then the async checkpoint is discarded

            assertThat(files("primary")).as("engine files left").isEmpty();
            assertThat(files("chk")).as("checkpoint files left").isEmpty();
        }
    }

    /**
     * The same discard on an interrupted thread (Flink cancels the task, then discards its async
     * checkpoint there), with a primary directory whose deletes are interruptible (an injected
     * delay, as HDFS and S3 calls are): the files the discard deletes itself must still go. Found
     * in a review: they were deleted with a plain delete, which failed at once, and nobody retried.
     */
    @Test
    void discardedAfterDispose_onAnInterruptedThread_leavesNoFile() throws Exception {
        InjectingFileSystem fs = InjectingFileSystem.shared();
        fs.reset();
        KeyedFixture fixture = new KeyedFixture(200);
        File primary = new File(tmp, "primary-inject");
        try (DisaggBackends backends =
                new DisaggBackends(
                        DisaggBackends.backend(fs.uri(primary), MemorySize.parse("1mb")))) {
            DisaggregatedKeyedStateBackend<Integer> b =
                    backends.create(DisaggBackends.ALL, List.of());
            RunnableFuture<SnapshotResult<KeyedStateHandle>> f = writeAndCheckpoint(b, fixture);
            assertThat(LocalDirs.files(primary)).as("the checkpoint flushed a file").isNotEmpty();

            backends.dispose(b);
            fs.latency(FsOp.DELETE, Latency.fixed(Duration.ofMillis(5)));
            Thread.currentThread().interrupt();
            try {
                StateUtil.discardStateFuture(f);
            } finally {
                Thread.interrupted();
            }
            assertThat(LocalDirs.files(primary)).as("engine files left").isEmpty();
        } finally {
            Thread.interrupted();
            fs.reset();
        }
    }

    /** Writes the fixture into {@code b} and runs a checkpoint of it; returns its future. */
    private RunnableFuture<SnapshotResult<KeyedStateHandle>> writeAndCheckpoint(
            DisaggregatedKeyedStateBackend<Integer> b, KeyedFixture fixture) throws Exception {
        fixture.write(b, 1);
        return checkpoint(b, 1);
    }

    /** Runs checkpoint {@code id} of {@code b}; returns its future. */
    private RunnableFuture<SnapshotResult<KeyedStateHandle>> checkpoint(
            DisaggregatedKeyedStateBackend<Integer> b, long id) throws Exception {
        RunnableFuture<SnapshotResult<KeyedStateHandle>> f =
                b.snapshot(
                        id,
                        0L,
                        LocalDirs.checkpointLocation(new File(tmp, "chk"), id),
                        CheckpointOptions.forCheckpointWithDefaultLocation());
        f.run();
        assertThat(f.get().getJobManagerOwnedSnapshot()).isNotNull();
        return f;
    }

    private DisaggBackends backends() {
        return DisaggBackends.inLocalDir(new File(tmp, "primary"), "1mb");
    }

    /** Regular files under {@code tmp/<dir>}, relative paths. */
    private List<String> files(String dir) throws IOException {
        return LocalDirs.files(new File(tmp, dir));
    }

    /**
     * Checkpoint streams whose {@code closeAndGetHandle} waits for {@link #release}, then completes
     * the upload: it ignores (and clears) interrupts and concurrent {@code close} calls.
     */
    private static final class SlowCloseStreams extends ForwardingStreamFactory {
        final CountDownLatch closing = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);

        SlowCloseStreams(CheckpointStreamFactory delegate) {
            super(delegate);
        }

        @Override
        protected CheckpointStateOutputStream wrap(
                CheckpointStateOutputStream out, CheckpointedStateScope scope) {
            return new SlowCloseStream(out);
        }

        private final class SlowCloseStream extends ForwardingOutputStream {
            private volatile boolean closingForHandle;

            SlowCloseStream(CheckpointStateOutputStream out) {
                super(out);
            }

            @Override
            public StreamStateHandle closeAndGetHandle() throws IOException {
                closingForHandle = true;
                closing.countDown();
                while (true) {
                    try {
                        release.await();
                        break;
                    } catch (InterruptedException e) {
                        // the upload goes on: this client ignores interrupts
                    }
                }
                return out.closeAndGetHandle();
            }

            @Override
            public void close() throws IOException {
                if (!closingForHandle) {
                    out.close();
                }
            }
        }
    }
}
