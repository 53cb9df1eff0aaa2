package io.github.flinkstate.disagg.conformance;

import io.github.flinkstate.disagg.DisaggregatedOptions;
import io.github.flinkstate.disagg.DisaggregatedStateBackend;
import io.github.flinkstate.disagg.DisaggregatedStateBackendFactory;
import io.github.flinkstate.testing.hdfs.MiniDfsExtension;
import java.util.List;
import java.util.UUID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.runtime.state.StateBackendTestBase;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.apache.flink.testutils.junit.extensions.parameterized.ParameterizedTestExtension;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameters;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Flink's keyed state backend conformance suite over the disaggregated backend with its primary
 * directory and the checkpoint storage on a real HDFS (Hadoop's MiniDFSCluster, started by the test
 * kit's {@link MiniDfsExtension}), reached through Flink's {@code hdfs://} file system: every
 * engine file, meta stream and restore goes over HDFS. The backend is built by its factory from a
 * Flink {@code Configuration}, as a cluster does; the smallest memtable (64 KiB) makes most tests
 * write and read engine files.
 */
@ExtendWith(ParameterizedTestExtension.class)
public class DisaggregatedHdfsStateBackendTest
        extends StateBackendTestBase<DisaggregatedStateBackend> {

    @RegisterExtension static final MiniDfsExtension HDFS = new MiniDfsExtension();

    @Parameters(name = "hdfs")
    public static List<Object[]> parameters() {
        return List.<Object[]>of(new Object[0]);
    }

    /** One folder per test case, so that no case sees another's files. */
    private final String testDir = "/conformance/" + UUID.randomUUID();

    @Override
    protected ConfigurableStateBackend getStateBackend() {
        Configuration config = new Configuration();
        config.set(DisaggregatedOptions.PRIMARY_DIRECTORY, HDFS.uri() + testDir + "/primary");
        config.set(DisaggregatedOptions.MEMTABLE_SIZE, MemorySize.parse("64kb"));
        return new DisaggregatedStateBackendFactory()
                .createFromConfig(config, getClass().getClassLoader());
    }

    @Override
    protected CheckpointStorage getCheckpointStorage() {
        return new FileSystemCheckpointStorage(HDFS.uri() + testDir + "/checkpoints");
    }

    @Override
    protected boolean isSerializerPresenceRequiredOnRestore() {
        return false;
    }

    @Override
    protected boolean supportsAsynchronousSnapshots() {
        return true;
    }
}
