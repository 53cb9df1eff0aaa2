package io.github.flinkstate.disagg.backend.testutil;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.api.common.JobID;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.CheckpointStorageAccess;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;

/** Local-directory helpers of the snapshot tests: checkpoint locations and file listings. */
public final class LocalDirs {

    private LocalDirs() {}

    /**
     * The stream factory of checkpoint {@code id} of a new job whose checkpoints go under {@code
     * checkpointDir} (every stream a file, threshold 0).
     */
    public static CheckpointStreamFactory checkpointLocation(File checkpointDir, long id)
            throws IOException {
        CheckpointStorageAccess access =
                new FileSystemCheckpointStorage(Path.fromLocalFile(checkpointDir), 0, -1)
                        .createCheckpointStorage(new JobID());
        access.initializeBaseLocationsForCheckpoint();
        return access.initializeLocationForCheckpoint(id);
    }

    /** Regular files under {@code dir}, as paths relative to it; empty if it does not exist. */
    public static List<String> files(File dir) throws IOException {
        java.nio.file.Path root = dir.toPath();
        if (!Files.exists(root)) {
            return List.of();
        }
        try (Stream<java.nio.file.Path> all = Files.walk(root)) {
            return all.filter(Files::isRegularFile)
                    .map(p -> root.relativize(p).toString())
                    .collect(Collectors.toList());
        }
    }
}
