package io.github.flinkstate.disagg.conformance;

import io.github.flinkstate.disagg.DisaggregatedOptions;
import io.github.flinkstate.disagg.DisaggregatedStateBackend;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.runtime.state.StateBackendTestBase;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameter;
import org.apache.flink.testutils.junit.extensions.parameterized.ParameterizedTestExtension;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameters;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Flink's keyed state backend conformance suite over the disaggregated backend, with the primary
 * directory and the checkpoint storage on the local file system; with the smallest memtable (64
 * KiB, every checkpoint and most tests flush files) with row caches that may take half of the block
 * cache, whose rows every flush must invalidate, and the default memtable (8 MiB) with the row
 * cache off.
 */
@ExtendWith(ParameterizedTestExtension.class)
public class DisaggregatedStateBackendTest extends StateBackendTestBase<DisaggregatedStateBackend> {

    @Parameters(name = "memtable={0}, row-cache-ratio={1}")
    public static List<Object[]> parameters() {
        return List.of(new Object[] {"64kb", 0.5}, new Object[] {"8mb", 0.0});
    }

    @Parameter public String memtable;

    @Parameter(1)
    public double rowCacheRatio;

    @TempDir Path tmp;

    private File dir;

    private File dir() throws Exception {
        if (dir == null) {
            dir = Files.createTempDirectory(tmp, "backend").toFile();
        }
        return dir;
    }

    @Override
    protected ConfigurableStateBackend getStateBackend() throws Exception {
        return new DisaggregatedStateBackend()
                .with(
                        DisaggregatedOptions.PRIMARY_DIRECTORY,
                        new File(dir(), "primary").toURI().toString())
                .with(DisaggregatedOptions.MEMTABLE_SIZE, MemorySize.parse(memtable))
                .with(DisaggregatedOptions.ROW_CACHE_RATIO, rowCacheRatio);
    }

    @Override
    protected CheckpointStorage getCheckpointStorage() throws Exception {
        return new FileSystemCheckpointStorage(new File(dir(), "checkpoints").toURI().toString());
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
