package io.github.flinkstate.changelog.upload;

import static io.github.flinkstate.changelog.testutils.Changes.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.changelog.DfsBatchedChangelogStorage;
import io.github.flinkstate.changelog.DfsChangelogOptions;
import io.github.flinkstate.changelog.testutils.Changes;
import io.github.flinkstate.changelog.testutils.TestStorages;
import java.io.File;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.jobgraph.JobVertexID;
import org.apache.flink.runtime.state.ChangelogTaskLocalStateStore;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.LocalRecoveryConfig;
import org.apache.flink.runtime.state.LocalSnapshotDirectoryProviderImpl;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.changelog.ChangelogStateHandleStreamImpl;
import org.apache.flink.runtime.state.changelog.SequenceNumber;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Local-recovery copies: written next to each upload, readable, and cleaned up. */
class LocalRecoveryCopiesTest {

    private static final KeyGroupRange RANGE = KeyGroupRange.of(0, 3);

    @TempDir File tmp;

    private DfsBatchedChangelogStorage storage;
    private File localDir;

    private DfsChangelogWriter open(Configuration config) throws Exception {
        JobID jobId = new JobID();
        LocalSnapshotDirectoryProviderImpl provider =
                new LocalSnapshotDirectoryProviderImpl(
                        new File(tmp, "local-state"), jobId, new JobVertexID(), 0);
        localDir =
                new File(
                        ChangelogTaskLocalStateStore.getLocalTaskOwnedDirectory(provider, jobId)
                                .toUri()
                                .getPath());
        storage =
                TestStorages.storage(
                        config,
                        new File(tmp, "tmp"),
                        LocalRecoveryConfig.backupAndRecoveryEnabled(provider),
                        jobId);
        return storage.createWriter("op", RANGE, null);
    }

    private Configuration config() {
        return TestStorages.config(new Path(new File(tmp, "dfs").toURI()));
    }

    @AfterEach
    void close() throws Exception {
        storage.getRegistry().checkInvariants();
        TestStorages.closeAndAwait(storage);
    }

    private static File file(StreamStateHandle handle) {
        return new File(((FileStateHandle) handle).getFilePath().toUri().getPath());
    }

    @Test
    void persist_returnsTaskLocalHandle_thatReadsTheSameChanges() throws Exception {
        DfsChangelogWriter writer = open(config());
        writer.append(1, bytes("a"));
        writer.nextSequenceNumber();
        writer.append(2, bytes("b"));
        SnapshotResult<ChangelogStateHandleStreamImpl> result =
                writer.persist(SequenceNumber.of(0), 1).get();

        ChangelogStateHandleStreamImpl local = result.getTaskLocalSnapshot();
        assertThat(local).isNotNull();
        assertThat(local.getHandlesAndOffsets()).hasSize(2);
        for (var segment : local.getHandlesAndOffsets()) {
            assertThat(file(segment.f0)).exists();
            assertThat(file(segment.f0).getParentFile()).isEqualTo(localDir);
        }
        assertThat(Changes.read(storage.createReader(), local)).containsExactly("1:a", "2:b");
        assertThat(Changes.read(storage.createReader(), result.getJobManagerOwnedSnapshot()))
                .containsExactly("1:a", "2:b");
    }

    @Test
    void confirmOfLaterCheckpoint_deletesCopiesOnlyEarlierCheckpointsUsed() throws Exception {
        DfsChangelogWriter writer = open(config());
        writer.append(1, bytes("a"));
        StreamStateHandle first =
                writer.persist(SequenceNumber.of(0), 1)
                        .get()
                        .getTaskLocalSnapshot()
                        .getHandlesAndOffsets()
                        .get(0)
                        .f0;
        SequenceNumber materialized = writer.nextSequenceNumber();
        writer.append(1, bytes("b"));
        writer.persist(materialized, 2).get();
        writer.confirm(materialized, writer.nextSequenceNumber(), 2);
        TestStorages.waitUntil(() -> !file(first).exists(), "local copy of checkpoint 1 deleted");
    }

    @Test
    void copyOfAnUploadNoCheckpointUsed_isDeletedWithTheRemoteFile() throws Exception {
        Configuration config = config();
        config.set(DfsChangelogOptions.PREEMPTIVE_PERSIST_THRESHOLD, MemorySize.parse("4b"));
        DfsChangelogWriter writer = open(config);
        writer.append(1, bytes("0123456789"));
        TestStorages.waitUntil(() -> storage.getRegistry().trackedFiles() == 1, "upload");
        assertThat(localDir.list()).hasSize(1);
        writer.truncate(writer.nextSequenceNumber());
        TestStorages.waitUntil(
                () -> localDir.list().length == 0 && TestStorages.files(storage).isEmpty(),
                "remote file and local copy deleted");
    }
}
