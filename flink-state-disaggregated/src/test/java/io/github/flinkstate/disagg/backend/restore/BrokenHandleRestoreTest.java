package io.github.flinkstate.disagg.backend.restore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.disagg.backend.DisaggregatedKeyedStateBackend;
import io.github.flinkstate.disagg.backend.snapshot.MetaStreamFormat;
import io.github.flinkstate.disagg.backend.testutil.DisaggBackends;
import io.github.flinkstate.disagg.backend.testutil.KeyedFixture;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.memory.ByteStreamStateHandle;
import org.apache.flink.util.ExceptionUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Restores from damaged handles fail with a message that names what is damaged, and leave nothing
 * in the primary directory: a meta stream cut short or with a corrupt length, and a native
 * savepoint missing one of the files its manifest lists after others were already written back.
 * Found in a review: a truncated meta stream failed with "null", a corrupt length with a {@code
 * NegativeArraySizeException} or an {@code OutOfMemoryError}, and a failed restore left the files
 * it had written back.
 */
class BrokenHandleRestoreTest {

    @TempDir File tmp;

    private final KeyedFixture fixture = new KeyedFixture(50);

    /** A native savepoint of 50 keys in two engine files, both inlined into its metadata. */
    private IncrementalRemoteKeyedStateHandle savepoint(DisaggBackends backends) throws Exception {
        DisaggregatedKeyedStateBackend<Integer> b = backends.create(DisaggBackends.ALL, List.of());
        fixture.write(b, 1);
        b.store().flush();
        fixture.write(b, 2);
        IncrementalRemoteKeyedStateHandle h = InlinedSavepoints.take(b, new File(tmp, "savepoint"));
        backends.dispose(b);
        return h;
    }

    private static IncrementalRemoteKeyedStateHandle with(
            IncrementalRemoteKeyedStateHandle h,
            List<HandleAndLocalPath> shared,
            StreamStateHandle meta) {
        return new IncrementalRemoteKeyedStateHandle(
                h.getBackendIdentifier(),
                h.getKeyGroupRange(),
                h.getCheckpointId(),
                shared,
                h.getPrivateState(),
                meta);
    }

    private static byte[] bytes(StreamStateHandle h) throws IOException {
        try (InputStream in = h.openInputStream()) {
            return in.readAllBytes();
        }
    }

    private List<String> writtenBack() throws IOException {
        return InlinedSavepoints.writtenBackUnder(new File(tmp, "restored"));
    }

    private DisaggBackends backends(String primary) {
        return new DisaggBackends(
                DisaggBackends.backend(
                        new File(tmp, primary).toURI().toString(), MemorySize.parse("64kb")));
    }

    private static String messages(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            sb.append(c.getClass().getSimpleName())
                    .append(": ")
                    .append(c.getMessage())
                    .append('\n');
        }
        return sb.toString();
    }

    @Test
    void aMetaStreamCutShort_failsNamingIt() throws Exception {
        try (DisaggBackends source = backends("source");
                DisaggBackends target = backends("restored")) {
            IncrementalRemoteKeyedStateHandle h = savepoint(source);
            byte[] meta = bytes(h.getMetaDataStateHandle());
            for (int cut : new int[] {meta.length / 2, meta.length - 8, meta.length - 1}) {
                StreamStateHandle shortMeta =
                        new ByteStreamStateHandle("meta-cut-at-" + cut, Arrays.copyOf(meta, cut));
                assertThatThrownBy(
                                () ->
                                        target.create(
                                                DisaggBackends.ALL,
                                                List.of(with(h, h.getSharedState(), shortMeta))))
                        .satisfies(
                                e ->
                                        assertThat(messages(e))
                                                .as("cut at %s of %s", cut, meta.length)
                                                .contains("meta-cut-at-" + cut)
                                                .contains("ends early"));
            }
            assertThat(writtenBack()).isEmpty();
        }
    }

    /**
     * A meta stream whose file is gone fails saying that the checkpoint's meta stream is missing.
     */
    @Test
    void aMissingMetaStream_failsNamingIt() throws Exception {
        try (DisaggBackends source = backends("source");
                DisaggBackends target = backends("restored")) {
            IncrementalRemoteKeyedStateHandle h = savepoint(source);
            StreamStateHandle gone =
                    new FileStateHandle(new Path(new File(tmp, "no-such-meta").toURI()), 10);
            assertThatThrownBy(
                            () ->
                                    target.create(
                                            DisaggBackends.ALL,
                                            List.of(with(h, h.getSharedState(), gone))))
                    .satisfies(
                            e ->
                                    assertThat(messages(e))
                                            .contains("The meta stream")
                                            .contains("no-such-meta")
                                            .contains("could not be opened"));
            assertThat(writtenBack()).isEmpty();
        }
    }

    @Test
    void aCorruptManifestLength_failsNamingTheStream() throws Exception {
        try (DisaggBackends source = backends("source");
                DisaggBackends target = backends("restored")) {
            IncrementalRemoteKeyedStateHandle h = savepoint(source);
            byte[] meta = bytes(h.getMetaDataStateHandle());
            int at = manifestLengthOffset(h, meta);
            for (int bad : new int[] {-5, 200_000_000, Integer.MAX_VALUE}) {
                byte[] corrupt = meta.clone();
                ByteBuffer.wrap(corrupt).putInt(at, bad);
                StreamStateHandle badMeta = new ByteStreamStateHandle("meta-bad-length", corrupt);
                assertThatThrownBy(
                                () ->
                                        target.create(
                                                DisaggBackends.ALL,
                                                List.of(with(h, h.getSharedState(), badMeta))))
                        .satisfies(
                                e -> {
                                    assertThat(messages(e))
                                            .contains("meta-bad-length")
                                            .contains("manifest length " + bad);
                                    assertThat(
                                                    ExceptionUtils.findThrowable(
                                                            e, NegativeArraySizeException.class))
                                            .isEmpty();
                                });
            }
        }
    }

    /**
     * A flipped byte inside the manifest (most of the meta stream, and its only checksum) fails
     * naming the meta stream. Found in a review: the manifest was checked only when the store
     * opened, whose error did not say which of the restored handles held it.
     */
    @Test
    void aCorruptManifestByte_failsNamingTheStream() throws Exception {
        try (DisaggBackends source = backends("source");
                DisaggBackends target = backends("restored")) {
            IncrementalRemoteKeyedStateHandle h = savepoint(source);
            byte[] meta = bytes(h.getMetaDataStateHandle());
            int at = manifestLengthOffset(h, meta) + 4 + 20; // inside the manifest
            byte[] corrupt = meta.clone();
            corrupt[at] ^= 0x5A;
            StreamStateHandle badMeta = new ByteStreamStateHandle("meta-bad-manifest", corrupt);
            assertThatThrownBy(
                            () ->
                                    target.create(
                                            DisaggBackends.ALL,
                                            List.of(with(h, h.getSharedState(), badMeta))))
                    .satisfies(
                            e ->
                                    assertThat(messages(e))
                                            .contains("meta-bad-manifest")
                                            .contains("Corrupted manifest"));
            assertThat(writtenBack()).isEmpty();
        }
    }

    @Test
    void aMissingFile_failsNamingIt_andLeavesNoWrittenBackFile() throws Exception {
        try (DisaggBackends source = backends("source");
                DisaggBackends target = backends("restored")) {
            IncrementalRemoteKeyedStateHandle h = savepoint(source);
            assertThat(h.getSharedState()).hasSizeGreaterThanOrEqualTo(2);
            List<HandleAndLocalPath> shared = new ArrayList<>(h.getSharedState());
            HandleAndLocalPath dropped = shared.remove(shared.size() - 1);
            assertThatThrownBy(
                            () ->
                                    target.create(
                                            DisaggBackends.ALL,
                                            List.of(with(h, shared, h.getMetaDataStateHandle()))))
                    .satisfies(
                            e ->
                                    assertThat(messages(e))
                                            .contains(dropped.getLocalPath())
                                            .contains("missing from the state handle"));
            assertThat(writtenBack()).as("files written back by the failed restore").isEmpty();
        }
    }

    /** Where the manifest's length field is: read the meta stream as the restore does. */
    private static int manifestLengthOffset(IncrementalRemoteKeyedStateHandle h, byte[] meta)
            throws Exception {
        java.io.ByteArrayInputStream in = new java.io.ByteArrayInputStream(meta);
        org.apache.flink.core.memory.DataInputViewStreamWrapper view =
                new org.apache.flink.core.memory.DataInputViewStreamWrapper(in);
        MetaStreamFormat.readHeader(view, "test");
        new org.apache.flink.runtime.state.KeyedBackendSerializationProxy<Integer>(
                        BrokenHandleRestoreTest.class.getClassLoader())
                .read(view);
        MetaStreamFormat.readStateIds(view);
        return meta.length - in.available();
    }
}
