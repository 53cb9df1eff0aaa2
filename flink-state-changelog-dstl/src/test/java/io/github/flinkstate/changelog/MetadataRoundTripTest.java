package io.github.flinkstate.changelog;

import static io.github.flinkstate.changelog.testutils.Changes.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.changelog.read.DfsChangelogStorageView;
import io.github.flinkstate.changelog.testutils.Changes;
import io.github.flinkstate.changelog.testutils.TestStorages;
import io.github.flinkstate.changelog.upload.DfsChangelogWriter;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.File;
import java.util.List;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.checkpoint.metadata.MetadataV3Serializer;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SharedStateRegistryImpl;
import org.apache.flink.runtime.state.changelog.ChangelogStateBackendHandle;
import org.apache.flink.runtime.state.changelog.ChangelogStateHandle;
import org.apache.flink.runtime.state.changelog.ChangelogStateHandleStreamImpl;
import org.apache.flink.runtime.state.changelog.SequenceNumber;
import org.apache.flink.runtime.state.changelog.StateChangelogStorageLoader;
import org.apache.flink.runtime.state.changelog.StateChangelogStorageView;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The handles our DSTL produces survive Flink's checkpoint metadata serializer, and a restore finds
 * our storage through the identifier recorded in them.
 */
class MetadataRoundTripTest {

    private static final KeyGroupRange RANGE = KeyGroupRange.of(0, 15);

    @TempDir File tmp;

    private DfsBatchedChangelogStorage storage;
    private ChangelogStateHandleStreamImpl handle;

    @BeforeEach
    void write() throws Exception {
        storage =
                TestStorages.storage(
                        TestStorages.config(new Path(new File(tmp, "dfs").toURI())),
                        new File(tmp, "local"));
        DfsChangelogWriter writer = storage.createWriter("op", RANGE, null);
        writer.appendMeta(bytes("meta"));
        writer.append(3, bytes("x"));
        writer.nextSequenceNumber();
        writer.append(7, bytes("y"));
        handle = writer.persist(SequenceNumber.of(0), 1).get().getJobManagerOwnedSnapshot();
    }

    @AfterEach
    void close() throws Exception {
        storage.close();
    }

    private static KeyedStateHandle roundTrip(KeyedStateHandle handle) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            MetadataV3Serializer.INSTANCE.serializeKeyedStateHandleUtil(handle, out);
        }
        try (DataInputStream in =
                new DataInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
            return MetadataV3Serializer.INSTANCE.deserializeKeyedStateHandleUtil(in);
        }
    }

    @Test
    void changelogHandle_roundTrips_andRestoreFindsOurStorage() throws Exception {
        KeyedStateHandle read = roundTrip(handle);

        assertThat(read).isInstanceOf(ChangelogStateHandleStreamImpl.class);
        ChangelogStateHandleStreamImpl restored = (ChangelogStateHandleStreamImpl) read;
        assertThat(restored.getStorageIdentifier()).isEqualTo("dfs-batched");
        assertThat(restored.getHandlesAndOffsets()).isEqualTo(handle.getHandlesAndOffsets());
        assertThat(restored.getKeyGroupRange()).isEqualTo(RANGE);
        assertThat(restored.getStateSize()).isEqualTo(handle.getStateSize());
        assertThat(restored.getStateHandleId()).isEqualTo(handle.getStateHandleId());

        StateChangelogStorageView<?> view =
                StateChangelogStorageLoader.loadFromStateHandle(new Configuration(), restored);
        try {
            assertThat(view).isInstanceOf(DfsChangelogStorageView.class);
            assertThat(Changes.read(((DfsChangelogStorageView) view).createReader(), restored))
                    .containsExactly("-1:meta", "3:x", "7:y");
        } finally {
            view.close();
        }
    }

    @Test
    void backendHandle_withOurChangelog_roundTrips_andRegistersItsFiles() throws Exception {
        ChangelogStateBackendHandle backendHandle =
                new ChangelogStateBackendHandle.ChangelogStateBackendHandleImpl(
                        List.of(), List.<ChangelogStateHandle>of(handle), RANGE, 5, 2, 10);
        KeyedStateHandle read = roundTrip(backendHandle);

        assertThat(read).isInstanceOf(ChangelogStateBackendHandle.class);
        ChangelogStateBackendHandle restored = (ChangelogStateBackendHandle) read;
        assertThat(restored.getNonMaterializedStateHandles()).hasSize(1);
        ChangelogStateHandle changelog = restored.getNonMaterializedStateHandles().get(0);
        assertThat(changelog.getStorageIdentifier())
                .isEqualTo(DfsBatchedChangelogStorageFactory.IDENTIFIER);

        SharedStateRegistryImpl registry = new SharedStateRegistryImpl();
        restored.registerSharedStates(registry, 5);
        registry.close();
    }
}
