package io.github.flinkstate.disagg.conformance;

import io.github.flinkstate.disagg.DisaggregatedOptions;
import io.github.flinkstate.disagg.DisaggregatedStateBackend;
import java.nio.file.Files;
import java.util.List;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.StateBackendMigrationTestBase;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameter;
import org.apache.flink.testutils.junit.extensions.parameterized.ParameterizedTestExtension;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameters;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Flink's state migration suite (serializer upgrades, reconfiguration, incompatible serializers
 * refused) over the disaggregated backend, with the smallest memtable (the migrated values are in
 * files) and the default one (they are in the memtable). Its list cases write lists with {@code
 * addAll} and {@code update}, so they migrate entries holding several elements.
 */
@ExtendWith(ParameterizedTestExtension.class)
public class DisaggregatedStateBackendMigrationTest
        extends StateBackendMigrationTestBase<DisaggregatedStateBackend> {

    @Parameters(name = "memtable={0}")
    public static List<Object[]> parameters() {
        return List.of(new Object[] {"64kb"}, new Object[] {"8mb"});
    }

    @Parameter public String memtable;

    @Override
    protected DisaggregatedStateBackend getStateBackend() throws Exception {
        return new DisaggregatedStateBackend()
                .with(
                        DisaggregatedOptions.PRIMARY_DIRECTORY,
                        Files.createTempDirectory(tempFolder, "primary").toUri().toString())
                .with(DisaggregatedOptions.MEMTABLE_SIZE, MemorySize.parse(memtable));
    }

    @Override
    protected CheckpointStorage getCheckpointStorage() throws Exception {
        return new FileSystemCheckpointStorage(
                Files.createTempDirectory(tempFolder, "checkpoints").toUri().toString());
    }
}
