package io.github.flinkstate.composition;

import java.io.File;
import java.util.UUID;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.apache.flink.runtime.state.ttl.ReferencingSnapshotDelegateTtlStateTestBase;
import org.apache.flink.runtime.state.ttl.StateBackendTestContext;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.junit.jupiter.api.io.TempDir;

/**
 * Flink's TTL suite over the LRU cache (one entry) with the disaggregated backend as its delegate,
 * loaded from a Flink {@code Configuration}. The two snapshot-cleanup tests are disabled, as in the
 * disaggregated backend's own TTL suite (see the base class).
 */
public class LruCacheOverDisaggregatedTtlStateTest
        extends ReferencingSnapshotDelegateTtlStateTestBase {

    @TempDir static File tmp;

    @Override
    protected StateBackendTestContext createStateBackendTestContext(TtlTimeProvider timeProvider) {
        File dir = new File(tmp, UUID.randomUUID().toString());
        return new StateBackendTestContext(timeProvider) {
            @Override
            protected StateBackend createStateBackend() {
                try {
                    return ComposedBackends.load(
                            ComposedBackends.lruCacheOverDisaggregated(dir, 1));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }

            @Override
            protected CheckpointStorage createCheckpointStorage() {
                return new FileSystemCheckpointStorage(
                        new File(dir, "checkpoints").toURI().toString());
            }
        };
    }
}
