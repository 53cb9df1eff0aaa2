package io.github.flinkstate.disagg.conformance;

import io.github.flinkstate.disagg.DisaggregatedOptions;
import io.github.flinkstate.disagg.DisaggregatedStateBackendFactory;
import io.github.flinkstate.testing.hdfs.MiniDfsExtension;
import java.util.UUID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.apache.flink.runtime.state.ttl.ReferencingSnapshotTtlStateTestBase;
import org.apache.flink.runtime.state.ttl.StateBackendTestContext;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Flink's TTL suite over the disaggregated backend with its primary directory and the checkpoint
 * storage on a real HDFS (MiniDFSCluster through the test kit's {@link MiniDfsExtension}); built by
 * the backend's factory from a Flink {@code Configuration}. The two snapshot-cleanup tests are
 * disabled as on the local file system (see the base class).
 */
public class DisaggregatedHdfsTtlStateTest extends ReferencingSnapshotTtlStateTestBase {

    @RegisterExtension static final MiniDfsExtension HDFS = new MiniDfsExtension();

    @Override
    protected StateBackendTestContext createStateBackendTestContext(TtlTimeProvider timeProvider) {
        String dir = HDFS.uri() + "/ttl/" + UUID.randomUUID();
        return new StateBackendTestContext(timeProvider) {
            @Override
            protected StateBackend createStateBackend() {
                Configuration config = new Configuration();
                config.set(DisaggregatedOptions.PRIMARY_DIRECTORY, dir + "/primary");
                return new DisaggregatedStateBackendFactory()
                        .createFromConfig(config, getClass().getClassLoader());
            }

            @Override
            protected CheckpointStorage createCheckpointStorage() {
                return new FileSystemCheckpointStorage(dir + "/checkpoints");
            }
        };
    }
}
