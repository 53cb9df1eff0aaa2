package io.github.flinkstate.disagg.backend.restore;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.backend.DisaggregatedKeyedStateBackend;
import io.github.flinkstate.disagg.backend.testutil.DisaggBackends;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.local.LocalFileSystem;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.SavepointType;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.memory.ByteStreamStateHandle;

/**
 * Native savepoints whose engine files Flink inlined into the metadata (as with a large {@code
 * state.storage.fs.memory-threshold}), and the files a restore of one wrote back: shared by the
 * restore tests of written-back files.
 */
final class InlinedSavepoints {

    private InlinedSavepoints() {}

    /**
     * A native savepoint of {@code b} into {@code dir}, every engine file (up to 1 MiB) inlined.
     */
    static IncrementalRemoteKeyedStateHandle take(
            DisaggregatedKeyedStateBackend<Integer> b, File dir) throws Exception {
        dir.mkdirs();
        var inlining =
                new org.apache.flink.runtime.state.filesystem.FsCheckpointStreamFactory(
                        LocalFileSystem.getSharedInstance(),
                        new Path(dir.toURI()),
                        new Path(dir.toURI()),
                        1 << 20,
                        4096);
        IncrementalRemoteKeyedStateHandle handle =
                (IncrementalRemoteKeyedStateHandle)
                        DisaggBackends.snapshot(
                                        b,
                                        1,
                                        inlining,
                                        new CheckpointOptions(
                                                SavepointType.savepoint(SavepointFormatType.NATIVE),
                                                CheckpointStorageLocationReference.getDefault()))
                                .getJobManagerOwnedSnapshot();
        assertThat(handle.getSharedState())
                .isNotEmpty()
                .allMatch(e -> e.getHandle() instanceof ByteStreamStateHandle);
        return handle;
    }

    /** The files a restore wrote back ("restored-*") anywhere under {@code primaryRoot}. */
    static List<String> writtenBackUnder(File primaryRoot) throws IOException {
        java.nio.file.Path root = primaryRoot.toPath();
        if (!Files.exists(root)) {
            return List.of();
        }
        try (Stream<java.nio.file.Path> all = Files.walk(root)) {
            return all.filter(p -> p.getFileName().toString().startsWith("restored-"))
                    .map(java.nio.file.Path::toString)
                    .collect(Collectors.toList());
        }
    }
}
