package io.github.flinkstate.lru.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.lru.StateBackendWrapperWithLRUCache;
import io.github.flinkstate.lru.backend.LruCacheKeyedStateBackend;
import io.github.flinkstate.lru.support.KeyedBackendHarness;
import io.github.flinkstate.testing.checkpoint.ForwardingOutputStream;
import io.github.flinkstate.testing.checkpoint.ForwardingStreamFactory;
import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RunnableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.CheckpointStateOutputStream;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.CheckpointedStateScope;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A checkpoint of the cache over RocksDB that is cancelled while RocksDB still uploads (a job
 * cancelled or failing over during a checkpoint) must leave no file behind: nobody registers the
 * files of a cancelled snapshot, so the backend has to delete them. The upload here ignores the
 * interrupt of the cancellation, as HDFS clients can; the cluster tests first showed the leak as
 * four RocksDB {@code shared/} files written about 100 ms after their job was cancelled.
 */
class CancelledSnapshotCleanupTest {

    private static final ValueStateDescriptor<String> VALUE =
            new ValueStateDescriptor<>("value", StringSerializer.INSTANCE);

    @TempDir File tmp;

    @ParameterizedTest(name = "dirty cache entries at the checkpoint: {0}")
    @ValueSource(booleans = {false, true})
    void aSnapshotCancelledWhileTheDelegateUploadsLeavesNoFile(boolean dirtyEntries)
            throws Exception {
        try (KeyedBackendHarness harness = new KeyedBackendHarness(tmp)) {
            EmbeddedRocksDBStateBackend rocks = new EmbeddedRocksDBStateBackend(true);
            rocks.setDbStoragePath(new File(tmp, "rocks").getAbsolutePath());
            rocks.setNumberOfTransferThreads(1);
            AbstractKeyedStateBackend<Integer> backend =
                    harness.create(new StateBackendWrapperWithLRUCache(rocks, 100), List.of());
            ValueState<String> value = KeyedBackendHarness.state(backend, VALUE);
            for (int k = 0; k < 5_000; k++) {
                backend.setCurrentKey(k);
                value.update("value-of-key-" + k + "-" + "x".repeat(k % 37));
            }
            if (!dirtyEntries) {
                backend.numKeyValueStateEntries(); // writes every cached entry back
            }

            BlockingStreamFactory streams = new BlockingStreamFactory(harness.streamFactory());
            RunnableFuture<SnapshotResult<KeyedStateHandle>> future =
                    backend.snapshot(
                            1L, 0L, streams, CheckpointOptions.forCheckpointWithDefaultLocation());
            Thread checkpointing = new Thread(future, "async-part-of-checkpoint-1");
            checkpointing.start();
            assertThat(streams.blocked.await(30, TimeUnit.SECONDS))
                    .as("RocksDB started uploading")
                    .isTrue();

            assertThat(future.cancel(true)).isTrue();
            streams.release.countDown();
            checkpointing.join(TimeUnit.SECONDS.toMillis(30));
            assertThat(checkpointing.isAlive()).as("the cancelled snapshot ended").isFalse();

            Waits.until(
                    "every file of the cancelled checkpoint deleted (left: "
                            + checkpointFiles()
                            + ")",
                    Duration.ofSeconds(10),
                    () -> checkpointFiles().isEmpty());
        }
    }

    /**
     * A snapshot future cancelled before its asynchronous part ever ran, without interrupt ({@code
     * cancel(false)}), must still release what the synchronous part took: the frozen cache version
     * (while it is held every write to a frozen entry copies it) and the delegate's snapshot.
     * Before, only {@code cancel(true)} released them; Flink cancels with {@code true} today, so
     * this was latent (found in a review).
     */
    @ParameterizedTest(name = "interrupt: {0}")
    @ValueSource(booleans = {false, true})
    void aSnapshotCancelledBeforeItRan_releasesTheCacheSnapshot(boolean interrupt)
            throws Exception {
        try (KeyedBackendHarness harness = new KeyedBackendHarness(tmp)) {
            LruCacheKeyedStateBackend<Integer> backend =
                    (LruCacheKeyedStateBackend<Integer>)
                            harness.create(
                                    new StateBackendWrapperWithLRUCache(
                                            new EmbeddedRocksDBStateBackend(true), 100),
                                    List.of());
            ValueState<String> value = KeyedBackendHarness.state(backend, VALUE);
            for (int k = 0; k < 50; k++) {
                backend.setCurrentKey(k);
                value.update("v" + k);
            }
            RunnableFuture<SnapshotResult<KeyedStateHandle>> future =
                    backend.snapshot(
                            1L,
                            0L,
                            harness.streamFactory(),
                            CheckpointOptions.forCheckpointWithDefaultLocation());
            assertThat(backend.getCache().runningSnapshots()).isEqualTo(1);

            assertThat(future.cancel(interrupt)).isTrue();
            assertThat(backend.getCache().runningSnapshots())
                    .as("the frozen cache version is released")
                    .isZero();
            future.run(); // a cancelled future never runs its part
            assertThat(checkpointFiles()).isEmpty();
        }
    }

    /** Files in the harness's checkpoint directories, except its placeholder metadata file. */
    private List<String> checkpointFiles() {
        List<String> out = new ArrayList<>();
        for (String dir : List.of("chk", "shared")) {
            File[] files = new File(tmp, dir).listFiles();
            if (files != null) {
                for (File f : files) {
                    if (!f.getName().equals("_metadata")) {
                        out.add(dir + "/" + f.getName());
                    }
                }
            }
        }
        return out;
    }

    /**
     * Blocks the first write to the first shared-scope stream until {@link #release}, ignoring
     * interrupts meanwhile (as an HDFS client in the middle of a write can).
     */
    private static final class BlockingStreamFactory extends ForwardingStreamFactory {
        private final CountDownLatch blocked = new CountDownLatch(1);
        private final CountDownLatch release = new CountDownLatch(1);
        private final AtomicBoolean armed = new AtomicBoolean(true);

        BlockingStreamFactory(CheckpointStreamFactory delegate) {
            super(delegate);
        }

        @Override
        protected CheckpointStateOutputStream wrap(
                CheckpointStateOutputStream out, CheckpointedStateScope scope) {
            boolean block = scope == CheckpointedStateScope.SHARED && armed.getAndSet(false);
            return block ? new BlockingStream(out) : out;
        }

        private final class BlockingStream extends ForwardingOutputStream {
            private boolean waited;

            BlockingStream(CheckpointStateOutputStream out) {
                super(out);
            }

            private void maybeBlock() {
                if (waited) {
                    return;
                }
                waited = true;
                blocked.countDown();
                while (true) {
                    try {
                        release.await();
                        return;
                    } catch (InterruptedException ignored) {
                        // deliberately swallowed: this write does not react to cancellation
                    }
                }
            }

            @Override
            public void write(int b) throws IOException {
                maybeBlock();
                out.write(b);
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                maybeBlock();
                out.write(b, off, len);
            }
        }
    }
}
