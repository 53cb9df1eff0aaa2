package io.github.flinkstate.composition;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.changelog.DfsBatchedChangelogStorageFactory;
import java.io.File;
import java.util.UUID;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.changelog.ChangelogStateBackendHandle;
import org.apache.flink.runtime.state.changelog.ChangelogStateHandle;
import org.apache.flink.runtime.state.changelog.StateChangelogStorage;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.apache.flink.runtime.state.ttl.ChangelogTtlStateTestBase;
import org.apache.flink.runtime.state.ttl.StateBackendTestContext;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * Flink's TTL suite over Flink's changelog backend with the disaggregated backend as its delegate
 * and our {@code dfs-batched} DSTL as its changelog storage, the backends loaded from a Flink
 * {@code Configuration} ({@link ComposedBackends#changelogOverDisaggregated}). The suite's harness
 * builds its own task environment, with Flink's in-memory changelog storage; {@link
 * ChangelogStorageInjectingBackend} puts our DSTL in its place, and every snapshot is checked to
 * hold changes of our DSTL only. The two snapshot-cleanup tests are disabled: Flink's changelog
 * backend fails them whatever its delegate (see {@link ChangelogTtlStateTestBase}).
 */
public class ChangelogOverDisaggregatedTtlStateTest extends ChangelogTtlStateTestBase {

    @TempDir static File tmp;

    /** One DSTL for all cases, as a TaskManager has one per job; closed after the last case. */
    private static StateChangelogStorage<?> storage;

    @BeforeAll
    static void openStorage() throws Exception {
        storage =
                ComposedBackends.changelogStorage(
                        ComposedBackends.changelogOverDisaggregated(new File(tmp, "storage")));
    }

    @AfterAll
    static void closeStorage() throws Exception {
        ComposedBackends.closeAndAwait(storage);
    }

    @Override
    protected StateBackendTestContext createStateBackendTestContext(TtlTimeProvider timeProvider) {
        File dir = new File(tmp, UUID.randomUUID().toString());
        return new StateBackendTestContext(timeProvider) {
            @Override
            protected StateBackend createStateBackend() {
                try {
                    return new ChangelogStorageInjectingBackend(
                            ComposedBackends.load(ComposedBackends.changelogOverDisaggregated(dir)),
                            storage);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }

            @Override
            protected CheckpointStorage createCheckpointStorage() {
                return new FileSystemCheckpointStorage(
                        new File(dir, "checkpoints").toURI().toString());
            }

            @Override
            public KeyedStateHandle takeSnapshot() throws Exception {
                KeyedStateHandle snapshot = super.takeSnapshot();
                if (snapshot != null) { // null: nothing written yet
                    assertThat(snapshot).isInstanceOf(ChangelogStateBackendHandle.class);
                    assertThat(
                                    ((ChangelogStateBackendHandle) snapshot)
                                            .getNonMaterializedStateHandles())
                            .extracting(ChangelogStateHandle::getStorageIdentifier)
                            .containsOnly(DfsBatchedChangelogStorageFactory.IDENTIFIER);
                }
                return snapshot;
            }
        };
    }
}
