package io.github.flinkstate.changelog.testutils;

import io.github.flinkstate.changelog.DfsBatchedChangelogStorage;
import io.github.flinkstate.changelog.DfsChangelogOptions;
import io.github.flinkstate.changelog.DfsChangelogSettings;
import io.github.flinkstate.changelog.upload.DfsChangelogWriter;
import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.Path;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.LocalRecoveryConfig;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.changelog.SequenceNumber;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;

/** Builds storages for tests and waits (with a deadline) for asynchronous conditions. */
public final class TestStorages {

    private TestStorages() {}

    /** A configuration with the given base path and immediate (unbatched) uploads. */
    public static Configuration config(Path base) {
        Configuration config = new Configuration();
        config.set(DfsChangelogOptions.BASE_PATH, base.toString());
        config.set(DfsChangelogOptions.PERSIST_DELAY, Duration.ZERO);
        return config;
    }

    /**
     * Closes the storage and waits until its uploads and deletions stopped, so that the test's
     * temporary directory is not deleted while an interrupted upload attempt still writes or
     * deletes its file there.
     */
    public static void closeAndAwait(DfsBatchedChangelogStorage storage) throws Exception {
        storage.close();
        if (!storage.awaitBackgroundWork(Duration.ofSeconds(60))) {
            throw new AssertionError("uploads or deletions still running 60 s after close");
        }
    }

    public static DfsBatchedChangelogStorage storage(Configuration config, File tmp)
            throws IOException {
        return storage(config, tmp, LocalRecoveryConfig.BACKUP_AND_RECOVERY_DISABLED, new JobID());
    }

    public static DfsBatchedChangelogStorage storage(
            Configuration config, File tmp, LocalRecoveryConfig localRecovery, JobID jobId)
            throws IOException {
        return new DfsBatchedChangelogStorage(
                jobId,
                DfsChangelogSettings.forWriting(config),
                new UnregisteredMetricsGroup(),
                localRecovery,
                tmp);
    }

    /**
     * Writes one DSTL file holding one change ({@code content}) through a storage whose base path
     * is {@code base} (working files under {@code localTmp}) and returns the file's handle.
     */
    public static FileStateHandle writeOneFile(Path base, File localTmp, String content)
            throws Exception {
        return (FileStateHandle) writeOneSegment(base, localTmp, content).f0;
    }

    /** Writes one change to key group 0 and returns its file and the segment's offset in it. */
    public static Tuple2<StreamStateHandle, Long> writeOneSegment(
            Path base, File localTmp, String content) throws Exception {
        try (DfsBatchedChangelogStorage storage = storage(config(base), localTmp)) {
            DfsChangelogWriter writer = storage.createWriter("op", KeyGroupRange.of(0, 0), null);
            writer.append(0, content.getBytes(StandardCharsets.UTF_8));
            return writer.persist(SequenceNumber.of(0), 1)
                    .get()
                    .getJobManagerOwnedSnapshot()
                    .getHandlesAndOffsets()
                    .get(0);
        }
    }

    /** The DSTL files currently in the storage's directory (local or inject:// scheme). */
    public static List<String> files(DfsBatchedChangelogStorage storage) {
        File dir = new File(storage.getDirectory().toUri().getPath());
        String[] names = dir.list();
        return names == null
                ? List.of()
                : Arrays.stream(names).sorted().collect(Collectors.toList());
    }

    /** {@link Waits#until} with a generous minute, the deadline every wait here uses. */
    public static void waitUntil(BooleanSupplier condition, String what) throws Exception {
        Waits.until(what, Duration.ofMinutes(1), condition);
    }
}
