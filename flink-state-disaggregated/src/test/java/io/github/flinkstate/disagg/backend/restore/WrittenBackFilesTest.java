package io.github.flinkstate.disagg.backend.restore;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.backend.DisaggregatedKeyedStateBackend;
import io.github.flinkstate.disagg.backend.testutil.DisaggBackends;
import io.github.flinkstate.disagg.backend.testutil.KeyedFixture;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.local.LocalFileSystem;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.SavepointType;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.filesystem.FsCheckpointStreamFactory;
import org.apache.flink.runtime.state.memory.ByteStreamStateHandle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Engine files that a native savepoint inlined into its metadata (small files) are written back
 * into the primary directory on restore. Those copies belong to the restored store: it deletes one
 * when a compaction drops it and on dispose, unless a checkpoint named it. Found in a review: they
 * were treated like the savepoint's own files, which the store never deletes, and were left in the
 * primary directory after every such restore.
 */
class WrittenBackFilesTest {

    @TempDir File tmp;

    private final KeyedFixture fixture = new KeyedFixture(50);

    private KeyedStateHandle nativeSavepointWithInlinedFiles(DisaggBackends backends)
            throws Exception {
        DisaggregatedKeyedStateBackend<Integer> b = backends.create(DisaggBackends.ALL, List.of());
        fixture.write(b, 1);
        File chk = new File(tmp, "savepoint");
        chk.mkdirs();
        // files up to 1 MiB are inlined into the metadata, as with a large
        // state.storage.fs.memory-threshold
        FsCheckpointStreamFactory inlining =
                new FsCheckpointStreamFactory(
                        LocalFileSystem.getSharedInstance(),
                        new Path(chk.toURI()),
                        new Path(chk.toURI()),
                        1 << 20,
                        4096);
        KeyedStateHandle handle =
                DisaggBackends.snapshot(
                                b,
                                1,
                                inlining,
                                new CheckpointOptions(
                                        SavepointType.savepoint(SavepointFormatType.NATIVE),
                                        CheckpointStorageLocationReference.getDefault()))
                        .getJobManagerOwnedSnapshot();
        assertThat(((IncrementalRemoteKeyedStateHandle) handle).getSharedState())
                .isNotEmpty()
                .allMatch(e -> e.getHandle() instanceof ByteStreamStateHandle);
        backends.dispose(b);
        return handle;
    }

    private List<String> writtenBack() throws IOException {
        java.nio.file.Path root = new File(tmp, "restored").toPath();
        if (!Files.exists(root)) {
            return List.of();
        }
        try (Stream<java.nio.file.Path> all = Files.walk(root)) {
            return all.filter(p -> p.getFileName().toString().startsWith("restored-"))
                    .map(java.nio.file.Path::toString)
                    .collect(Collectors.toList());
        }
    }

    @Test
    void writtenBackFilesAreDeletedOnDispose() throws Exception {
        try (DisaggBackends source = backends("source");
                DisaggBackends target = backends("restored")) {
            KeyedStateHandle savepoint = nativeSavepointWithInlinedFiles(source);
            DisaggregatedKeyedStateBackend<Integer> b =
                    target.create(DisaggBackends.ALL, List.of(savepoint));
            assertThat(fixture.verify(b, 1)).isEqualTo(50);
            assertThat(writtenBack()).as("files written back by the restore").isNotEmpty();
            target.dispose(b);
            assertThat(writtenBack()).as("written-back files left after dispose").isEmpty();
        }
    }

    @Test
    void writtenBackFilesAreDeletedWhenCompactedAway() throws Exception {
        try (DisaggBackends source = backends("source");
                DisaggBackends target = backends("restored")) {
            KeyedStateHandle savepoint = nativeSavepointWithInlinedFiles(source);
            DisaggregatedKeyedStateBackend<Integer> b =
                    target.create(DisaggBackends.ALL, List.of(savepoint));
            fixture.write(b, 2);
            b.compactAll();
            assertThat(fixture.verify(b, 2)).isEqualTo(50);
            assertThat(writtenBack()).as("written-back files left after compaction").isEmpty();
        }
    }

    private DisaggBackends backends(String primary) {
        return new DisaggBackends(
                DisaggBackends.backend(
                        new File(tmp, primary).toURI().toString(), MemorySize.parse("64kb")));
    }
}
