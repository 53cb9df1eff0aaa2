package io.github.flinkstate.lru.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.lru.StateBackendWrapperWithLRUCache;
import io.github.flinkstate.lru.support.KeyedBackendHarness;
import io.github.flinkstate.testing.checkpoint.ForwardingOutputStream;
import io.github.flinkstate.testing.checkpoint.ForwardingStreamFactory;
import java.io.File;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CancellationException;
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
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Closing or disposing the backend while a checkpoint's asynchronous part runs must leave that
 * checkpoint cancelled ({@code get()} throws {@link CancellationException}, as Flink's own snapshot
 * tasks do and as {@code StateBackendTestBase#testAsyncSnapshotCancellation} asserts), however
 * quickly the checkpointing thread reacts to the delegate's cancellation. Here the delegate's
 * stream, when the close reaches it, waits until the checkpointing thread has ended: the slowest
 * possible closing thread. A CI run failed this way once ("Close was not propagated") when the
 * cache's future completed with the delegate's cancellation as an ordinary failure before it was
 * cancelled itself.
 */
class CloseCancelsSnapshotTest {

    private static final ValueStateDescriptor<String> VALUE =
            new ValueStateDescriptor<>("value", StringSerializer.INSTANCE);

    @TempDir File tmp;

    /**
     * {@code close}, and {@code dispose}, which Flink's operator state handler runs before {@code
     * close} when a task ends (a review found dispose still closing the delegate first).
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"close", "dispose"})
    void closingTheBackendCancelsACheckpointInFlight(String how) throws Exception {
        try (KeyedBackendHarness harness = new KeyedBackendHarness(tmp)) {
            AbstractKeyedStateBackend<Integer> backend =
                    harness.create(
                            new StateBackendWrapperWithLRUCache(new HashMapStateBackend(), 100),
                            List.of());
            ValueState<String> value = KeyedBackendHarness.state(backend, VALUE);
            for (int k = 0; k < 1_000; k++) {
                backend.setCurrentKey(k);
                value.update("value-" + k);
            }
            backend.numKeyValueStateEntries(); // writes the cache back: the heap has data to write

            SlowClosingStreamFactory streams =
                    new SlowClosingStreamFactory(harness.streamFactory());
            RunnableFuture<SnapshotResult<KeyedStateHandle>> future =
                    backend.snapshot(
                            1L, 0L, streams, CheckpointOptions.forCheckpointWithDefaultLocation());
            Thread checkpointing = new Thread(future, "async-part-of-checkpoint-1");
            streams.checkpointing = checkpointing;
            checkpointing.start();
            assertThat(streams.blocked.await(30, TimeUnit.SECONDS))
                    .as("the delegate started writing")
                    .isTrue();

            if (how.equals("dispose")) {
                backend.dispose();
            } else {
                backend.close();
            }
            checkpointing.join(TimeUnit.SECONDS.toMillis(30));
            assertThat(checkpointing.isAlive()).as("the cancelled snapshot ended").isFalse();
            assertThat(future.isCancelled()).as("the checkpoint's future is cancelled").isTrue();
            assertThatThrownBy(future::get).isInstanceOf(CancellationException.class);
        }
    }

    /**
     * Blocks the first write of the first stream until the stream is closed; its close then waits
     * (bounded) until the checkpointing thread ended before it returns.
     */
    private static final class SlowClosingStreamFactory extends ForwardingStreamFactory {
        private final CountDownLatch blocked = new CountDownLatch(1);
        private final CountDownLatch closed = new CountDownLatch(1);
        private final AtomicBoolean armed = new AtomicBoolean(true);
        private volatile Thread checkpointing;

        SlowClosingStreamFactory(CheckpointStreamFactory delegate) {
            super(delegate);
        }

        @Override
        protected CheckpointStateOutputStream wrap(
                CheckpointStateOutputStream out, CheckpointedStateScope scope) {
            return armed.getAndSet(false) ? new SlowClosingStream(out) : out;
        }

        private final class SlowClosingStream extends ForwardingOutputStream {

            SlowClosingStream(CheckpointStateOutputStream out) {
                super(out);
            }

            private void blockUntilClosed() throws IOException {
                blocked.countDown();
                try {
                    closed.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                throw new IOException("stream closed");
            }

            @Override
            public void write(int b) throws IOException {
                blockUntilClosed();
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                blockUntilClosed();
            }

            @Override
            public void close() throws IOException {
                closed.countDown();
                Thread t = checkpointing;
                if (t != null && t != Thread.currentThread()) {
                    try {
                        t.join(TimeUnit.SECONDS.toMillis(5));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                out.close();
            }
        }
    }
}
