package io.github.flinkstate.composition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.disagg.DisaggregatedOptions;
import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.RunnableFuture;
import java.util.stream.Stream;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.StateAssignmentOperation;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.state.CheckpointStorageAccess;
import org.apache.flink.runtime.state.CheckpointableKeyedStateBackend;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.TestTaskStateManager;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.changelog.ChangelogStateBackendHandle;
import org.apache.flink.runtime.state.changelog.StateChangelogStorage;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.state.common.MaterializationSteps;
import org.apache.flink.state.common.PeriodicMaterializationManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The part of the changelog composition that Flink's suite does not reach: materialization. With
 * the default interval (10 minutes) Flink's changelog backend never materializes in the suite, so
 * the disaggregated delegate's own snapshots and restores are not exercised there. Here a
 * changelog-over-disaggregated keyed backend (loaded from a {@link Configuration}, on our DSTL)
 * writes value, list and map state, materializes (the disaggregated backend's checkpoint), writes
 * more, and checkpoints: the handle holds the disaggregated backend's {@link
 * IncrementalRemoteKeyedStateHandle} as the materialized part and the DSTL's changes since. It is
 * restored at parallelism 1 and rescaled to 2 (the changelog backend hands the delegate the
 * materialized handle clipped to each new range, then replays the changes); every value is right. A
 * replay that fails (the DSTL files gone) leaves the delegate undisposed: it is released when
 * collected, and the checkpoint stays whole.
 */
@Timeout(120)
class ChangelogMaterializationOverDisaggregatedTest {

    private static final int MAX_PARALLELISM = 128;
    private static final int KEYS = 2_000;

    @TempDir File dir;

    private final JobID jobId = new JobID();
    private final List<AutoCloseable> toClose = new ArrayList<>();

    private final ValueStateDescriptor<String> valueDescriptor =
            new ValueStateDescriptor<>("value", StringSerializer.INSTANCE);
    private final ListStateDescriptor<String> listDescriptor =
            new ListStateDescriptor<>("list", StringSerializer.INSTANCE);
    private final MapStateDescriptor<Integer, String> mapDescriptor =
            new MapStateDescriptor<>("map", IntSerializer.INSTANCE, StringSerializer.INSTANCE);

    @Test
    void materializedDisaggregatedCheckpoint_restoresAndRescales() throws Exception {
        Configuration config = ComposedBackends.changelogOverDisaggregated(dir);
        StateBackend backend = ComposedBackends.load(config);
        KeyedStateHandle handle = materializedAndLogged(backend, config);

        assertThat(handle).isInstanceOf(ChangelogStateBackendHandle.class);
        ChangelogStateBackendHandle changelogHandle = (ChangelogStateBackendHandle) handle;
        assertThat(changelogHandle.getMaterializedStateHandles())
                .singleElement()
                .isInstanceOf(IncrementalRemoteKeyedStateHandle.class);
        assertThat(changelogHandle.getNonMaterializedStateHandles()).isNotEmpty();

        CheckpointableKeyedStateBackend<Integer> restored =
                create(backend, config, KeyGroupRange.of(0, MAX_PARALLELISM - 1), List.of(handle));
        checkKeys(restored);

        for (KeyGroupRange range :
                StateAssignmentOperation.createKeyGroupPartitions(MAX_PARALLELISM, 2)) {
            KeyedStateHandle part = handle.getIntersection(range);
            CheckpointableKeyedStateBackend<Integer> rescaled =
                    create(backend, config, range, List.of(part));
            checkKeys(rescaled);
        }
    }

    /**
     * A replay that fails leaves the disaggregated backend Flink's changelog backend built for it
     * undisposed (Flink's restore has no clean-up for it): once collected, that backend releases
     * its local cache directory, and nothing the checkpoint needs is deleted: with the DSTL files
     * back, the same checkpoint restores every value.
     */
    @Test
    void failedReplay_releasesTheUndisposedDelegate_andKeepsTheCheckpoint() throws Exception {
        Configuration config = ComposedBackends.changelogOverDisaggregated(dir);
        config.set(DisaggregatedOptions.LOCAL_DIRECTORY, new File(dir, "local").getPath());
        config.set(DisaggregatedOptions.LOCAL_CACHE_SIZE, MemorySize.parse("16mb"));
        StateBackend backend = ComposedBackends.load(config);
        KeyedStateHandle handle = materializedAndLogged(backend, config);
        assertThat(cacheDirectories()).as("cache directories after the dispose").isEmpty();

        File dstl = new File(dir, "dstl");
        File aside = new File(dir, "dstl-aside");
        Files.move(dstl.toPath(), aside.toPath());
        assertThatThrownBy(
                        () ->
                                create(
                                        backend,
                                        config,
                                        KeyGroupRange.of(0, MAX_PARALLELISM - 1),
                                        List.of(handle)))
                .as("the replay of a checkpoint whose DSTL files are gone")
                .isInstanceOf(Exception.class);
        assertThat(cacheDirectories())
                .as("the cache directory of the delegate built for the failed replay")
                .hasSize(1);

        Waits.until(
                "the delegate of the failed replay released its cache directory",
                Duration.ofSeconds(60),
                () -> {
                    System.gc();
                    return cacheDirectories().isEmpty();
                });

        Files.move(aside.toPath(), dstl.toPath());
        checkKeys(
                create(backend, config, KeyGroupRange.of(0, MAX_PARALLELISM - 1), List.of(handle)));
    }

    /** A checkpoint of a backend that wrote, materialized, and wrote more; the backend disposed. */
    private KeyedStateHandle materializedAndLogged(StateBackend backend, Configuration config)
            throws Exception {
        CheckpointableKeyedStateBackend<Integer> first =
                create(backend, config, KeyGroupRange.of(0, MAX_PARALLELISM - 1), List.of());
        for (int k = 0; k < KEYS; k++) {
            first.setCurrentKey(k);
            value(first).update("a" + k);
            list(first).add("a" + k);
            map(first).put(k, "a" + k);
        }
        MaterializationSteps.materialize(
                (PeriodicMaterializationManager.MaterializationTarget) first);
        for (int k = 0; k < KEYS; k += 2) {
            first.setCurrentKey(k);
            value(first).update("b" + k);
            list(first).add("b" + k);
            map(first).remove(k);
            map(first).put(-k - 1, "b" + k);
        }
        KeyedStateHandle handle = snapshot(first);
        first.dispose();
        return handle;
    }

    private List<String> cacheDirectories() {
        File[] dirs = new File(new File(dir, "local"), "disaggregated-cache").listFiles();
        return dirs == null ? List.of() : Stream.of(dirs).map(File::getName).toList();
    }

    /** Every key of {@code b}'s range has its expected values; keys of other ranges are absent. */
    private void checkKeys(CheckpointableKeyedStateBackend<Integer> b) throws Exception {
        KeyGroupRange range = b.getKeyGroupRange();
        int checked = 0;
        for (int k = 0; k < KEYS; k++) {
            if (!range.contains(KeyGroupRangeAssignment.assignToKeyGroup(k, MAX_PARALLELISM))) {
                continue;
            }
            b.setCurrentKey(k);
            boolean updated = k % 2 == 0;
            assertThat(value(b).value()).isEqualTo((updated ? "b" : "a") + k);
            assertThat(list(b).get())
                    .containsExactlyElementsOf(
                            updated ? List.of("a" + k, "b" + k) : List.of("a" + k));
            if (updated) {
                assertThat(map(b).contains(k)).isFalse();
                assertThat(map(b).get(-k - 1)).isEqualTo("b" + k);
            } else {
                assertThat(map(b).get(k)).isEqualTo("a" + k);
            }
            checked++;
        }
        assertThat(checked).isPositive();
        int inRange = 0;
        try (var keys = b.getKeys(valueDescriptor.getName(), VoidNamespace.INSTANCE)) {
            for (var it = keys.iterator(); it.hasNext(); it.next()) {
                inRange++;
            }
        }
        assertThat(inRange).isEqualTo(checked);
    }

    private ValueState<String> value(CheckpointableKeyedStateBackend<Integer> b) throws Exception {
        return b.getPartitionedState(
                VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, valueDescriptor);
    }

    private ListState<String> list(CheckpointableKeyedStateBackend<Integer> b) throws Exception {
        return b.getPartitionedState(
                VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, listDescriptor);
    }

    private MapState<Integer, String> map(CheckpointableKeyedStateBackend<Integer> b)
            throws Exception {
        return b.getPartitionedState(
                VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, mapDescriptor);
    }

    private CheckpointableKeyedStateBackend<Integer> create(
            StateBackend backend,
            Configuration config,
            KeyGroupRange range,
            Collection<KeyedStateHandle> handles)
            throws Exception {
        StateChangelogStorage<?> storage = ComposedBackends.changelogStorage(config);
        toClose.add(() -> ComposedBackends.closeAndAwait(storage));
        MockEnvironment env =
                MockEnvironment.builder()
                        .setTaskStateManager(
                                TestTaskStateManager.builder()
                                        .setStateChangelogStorage(storage)
                                        .build())
                        .build();
        toClose.add(env);
        env.setCheckpointStorageAccess(checkpointStorage());
        CheckpointableKeyedStateBackend<Integer> b =
                backend.createKeyedStateBackend(
                        new KeyedStateBackendParametersImpl<>(
                                env,
                                jobId,
                                "composed-op",
                                IntSerializer.INSTANCE,
                                MAX_PARALLELISM,
                                range,
                                env.getTaskKvStateRegistry(),
                                TtlTimeProvider.DEFAULT,
                                new UnregisteredMetricsGroup(),
                                handles,
                                new CloseableRegistry()));
        toClose.add(b::dispose);
        return b;
    }

    private CheckpointStorageAccess checkpointStorage() throws Exception {
        // configured as a job configures it (write buffer at least the inline threshold)
        return new FileSystemCheckpointStorage(new File(dir, "checkpoints").toURI().toString())
                .configure(new Configuration(), getClass().getClassLoader())
                .createCheckpointStorage(jobId);
    }

    private KeyedStateHandle snapshot(CheckpointableKeyedStateBackend<Integer> b) throws Exception {
        CheckpointStorageAccess access = checkpointStorage();
        access.initializeBaseLocationsForCheckpoint();
        RunnableFuture<SnapshotResult<KeyedStateHandle>> future =
                b.snapshot(
                        1L,
                        0L,
                        access.resolveCheckpointStorageLocation(
                                1L,
                                CheckpointOptions.forCheckpointWithDefaultLocation()
                                        .getTargetLocation()),
                        CheckpointOptions.forCheckpointWithDefaultLocation());
        future.run();
        return future.get().getJobManagerOwnedSnapshot();
    }

    @AfterEach
    void close() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
        toClose.clear();
    }
}
