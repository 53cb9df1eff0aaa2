package io.github.flinkstate.composition;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.runtime.state.CheckpointableKeyedStateBackend;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupsSavepointStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Proves that canonical savepoints of the disaggregated backend work when it is wrapped by Flink's
 * changelog backend on our {@code dfs-batched} DSTL (with and without the LRU cache in between) and
 * by the LRU cache (a cache smaller than the state, so that the savepoint must merge cached and
 * evicted entries, and one with room for all of it, so that, the cache writing back only on
 * eviction, the state is in the cache alone when the savepoint is taken): a savepoint taken through
 * the stack, as Flink's operator state handler takes it, is in the canonical format and restores
 * exactly ({@link SavepointStateModel}: value, list, map, reducing state in two namespaces, timers)
 * into plain HashMap, plain RocksDB, the plain disaggregated backend and the same stack, and
 * rescaled from one subtask to two halves of the same stack, whose own savepoints go back into one
 * HashMap subtask. Every backend is loaded from a Flink {@code Configuration}, as a cluster loads
 * it ({@link ComposedBackends}).
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ComposedCanonicalSavepointTest {

    private static final int MAX_PARALLELISM = 128;

    /** The stacks whose savepoints are taken (and restored into in the "same stack" case). */
    enum Stack {
        CHANGELOG_OVER_DISAGGREGATED(ComposedBackends::changelogOverDisaggregated),
        CHANGELOG_OVER_LRU_OVER_DISAGGREGATED(
                dir -> ComposedBackends.changelogOverLruCacheOverDisaggregated(dir, 16)),
        LRU_16_OVER_DISAGGREGATED(dir -> ComposedBackends.lruCacheOverDisaggregated(dir, 16)),
        LRU_HOLDING_ALL_OVER_DISAGGREGATED(
                dir -> ComposedBackends.lruCacheOverDisaggregated(dir, 100_000));

        final Function<File, Configuration> config;

        Stack(Function<File, Configuration> config) {
            this.config = config;
        }
    }

    /** Where a savepoint is restored. */
    enum Target {
        HASHMAP,
        ROCKSDB,
        DISAGGREGATED,
        SAME_STACK
    }

    @TempDir File tmp;
    private CanonicalSavepointHarness harness;

    @BeforeEach
    void createHarness() throws Exception {
        harness =
                new CanonicalSavepointHarness(
                        tmp,
                        MAX_PARALLELISM,
                        ComposedBackends.changelogOverDisaggregated(new File(tmp, "storage")));
    }

    @AfterEach
    void closeHarness() throws Exception {
        harness.close();
    }

    static Stream<Arguments> stacksAndTargets() {
        return Stream.of(Stack.values())
                .flatMap(s -> Stream.of(Target.values()).map(t -> Arguments.of(s, t)));
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @MethodSource("stacksAndTargets")
    void canonicalSavepoint_restoresExactly(Stack stack, Target target) throws Exception {
        KeyGroupRange all = harness.range(1, 0);
        KeyedStateHandle savepoint = writeAndSavepoint(stack, all);

        CheckpointableKeyedStateBackend<String> restored =
                harness.create(config(target, stack), all, List.of(savepoint));
        SavepointStateModel.verify(restored, all, MAX_PARALLELISM);
    }

    @ParameterizedTest(name = "{0}: 1 -> 2 -> HashMap at 1")
    @EnumSource(Stack.class)
    void canonicalSavepoint_rescaledToTwoHalvesOfTheSameStack_andBack(Stack stack)
            throws Exception {
        KeyGroupRange all = harness.range(1, 0);
        KeyedStateHandle savepoint = writeAndSavepoint(stack, all);

        List<KeyedStateHandle> halves = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            KeyGroupRange half = harness.range(2, i);
            CheckpointableKeyedStateBackend<String> restored =
                    harness.create(
                            stack.config.apply(new File(tmp, "half-" + i)),
                            half,
                            CanonicalSavepointHarness.assign(List.of(savepoint), half));
            SavepointStateModel.verify(restored, half, MAX_PARALLELISM);
            halves.add(harness.savepoint(restored));
        }
        CheckpointableKeyedStateBackend<String> merged =
                harness.create(config(Target.HASHMAP, stack), all, halves);
        SavepointStateModel.verify(merged, all, MAX_PARALLELISM);
    }

    /** Writes the model into a new backend of {@code stack} and takes a canonical savepoint. */
    private KeyedStateHandle writeAndSavepoint(Stack stack, KeyGroupRange range) throws Exception {
        CheckpointableKeyedStateBackend<String> source =
                harness.create(stack.config.apply(new File(tmp, "source")), range, List.of());
        SavepointStateModel.write(
                source, SavepointStateModel.timers(source), range, MAX_PARALLELISM);
        KeyedStateHandle savepoint = harness.savepoint(source);
        assertThat(savepoint).isExactlyInstanceOf(KeyGroupsSavepointStateHandle.class);
        return savepoint;
    }

    private Configuration config(Target target, Stack stack) {
        File dir = new File(tmp, "target");
        Configuration config = new Configuration();
        switch (target) {
            case HASHMAP:
                config.set(StateBackendOptions.STATE_BACKEND, "hashmap");
                return config;
            case ROCKSDB:
                config.set(StateBackendOptions.STATE_BACKEND, "rocksdb");
                return config;
            case DISAGGREGATED:
                return ComposedBackends.disaggregatedAlone(dir);
            case SAME_STACK:
                return stack.config.apply(dir);
            default:
                throw new IllegalArgumentException(String.valueOf(target));
        }
    }
}
