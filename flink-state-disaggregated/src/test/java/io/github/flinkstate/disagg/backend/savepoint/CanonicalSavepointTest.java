package io.github.flinkstate.disagg.backend.savepoint;

import static io.github.flinkstate.disagg.backend.savepoint.SavepointHarness.Kind.DISAGGREGATED;
import static io.github.flinkstate.disagg.backend.savepoint.SavepointHarness.Kind.HASHMAP;
import static io.github.flinkstate.disagg.backend.savepoint.SavepointHarness.Kind.ROCKSDB;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.disagg.backend.savepoint.SavepointHarness.Kind;
import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RunnableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupsSavepointStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.util.StateMigrationException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Canonical savepoints between the disaggregated backend and Flink's HashMap and RocksDB backends,
 * in both directions and through rescaling, checked exactly with {@link StateModel} (value, list,
 * map, reducing, aggregating state in several namespaces, TTL-wrapped state, timers).
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class CanonicalSavepointTest {

    @TempDir File tmp;
    private SavepointHarness harness;

    @AfterEach
    void close() throws Exception {
        if (harness != null) {
            harness.close();
        }
    }

    private SavepointHarness harness(int maxParallelism) {
        harness = new SavepointHarness(tmp, maxParallelism);
        return harness;
    }

    static Stream<Arguments> chains() {
        // 128 key groups: one key-group byte in canonical keys; 1000: two
        return Stream.of(
                Arguments.of(DISAGGREGATED, HASHMAP, 128),
                Arguments.of(DISAGGREGATED, ROCKSDB, 1000),
                Arguments.of(HASHMAP, DISAGGREGATED, 1000),
                Arguments.of(ROCKSDB, DISAGGREGATED, 128),
                Arguments.of(DISAGGREGATED, DISAGGREGATED, 1000));
    }

    /**
     * {@code first} at parallelism 2 -> {@code second} at 3 -> {@code first} at 1, each step
     * through canonical savepoints; the state is exact at every step.
     */
    @ParameterizedTest(name = "{0} (p2) -> {1} (p3) -> {0} (p1), max parallelism {2}")
    @MethodSource("chains")
    void roundTrip_rescaled_2_3_1(Kind first, Kind second, int maxParallelism) throws Exception {
        SavepointHarness h = harness(maxParallelism);
        List<KeyedStateHandle> p2 = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            KeyGroupRange range = h.range(2, i);
            AbstractKeyedStateBackend<String> b = h.create(first, range, List.of());
            StateModel.write(b, range, maxParallelism);
            KeyedStateHandle sp = h.savepoint(b);
            assertThat(sp).isExactlyInstanceOf(KeyGroupsSavepointStateHandle.class);
            p2.add(sp);
        }
        List<KeyedStateHandle> p3 = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            KeyGroupRange range = h.range(3, i);
            AbstractKeyedStateBackend<String> b =
                    h.create(second, range, SavepointHarness.assign(p2, range));
            StateModel.verify(b, range, maxParallelism);
            p3.add(h.savepoint(b));
        }
        KeyGroupRange all = h.range(1, 0);
        AbstractKeyedStateBackend<String> b =
                h.create(first, all, SavepointHarness.assign(p3, all));
        StateModel.verify(b, all, maxParallelism);
    }

    /**
     * The savepoint holds the state as of its synchronous part: writes, deletes and timer changes
     * made before the asynchronous part runs are not in it (checked by restoring it into HashMap,
     * an independent reader, and into our backend).
     */
    @Test
    void writesAfterTheSynchronousPart_areNotInTheSavepoint() throws Exception {
        SavepointHarness h = harness(128);
        KeyGroupRange all = h.range(1, 0);
        AbstractKeyedStateBackend<String> b = h.create(DISAGGREGATED, all, List.of());
        StateModel.write(b, all, 128);
        RunnableFuture<SnapshotResult<KeyedStateHandle>> savepoint = h.start(b);
        StateModel.overwrite(b, all, 128);
        KeyedStateHandle sp = h.finish(savepoint);

        StateModel.verify(h.create(HASHMAP, all, List.of(sp)), all, 128);
        StateModel.verify(h.create(DISAGGREGATED, all, List.of(sp)), all, 128);
        // the source kept its later writes
        b.setCurrentKey(StateModel.key(1));
        ValueState<Long> value =
                StateModel.state(b, VoidNamespace.INSTANCE, StateModel.VOID, StateModel.VALUE);
        assertThat(value.value()).isEqualTo(-1L);
    }

    /**
     * State that a restore brought back but the job has not touched yet (its meta info is still the
     * restored one) is in the canonical savepoint too.
     */
    @Test
    void statesNotYetReRegistered_areInTheSavepoint() throws Exception {
        SavepointHarness h = harness(128);
        KeyGroupRange all = h.range(1, 0);
        AbstractKeyedStateBackend<String> source = h.create(ROCKSDB, all, List.of());
        StateModel.write(source, all, 128);
        KeyedStateHandle first = h.savepoint(source);
        AbstractKeyedStateBackend<String> restored = h.create(DISAGGREGATED, all, List.of(first));
        KeyedStateHandle second = h.savepoint(restored);
        StateModel.verify(h.create(HASHMAP, all, List.of(second)), all, 128);
    }

    /**
     * Handles that Flink did not clip (or that cover more key groups than the backend) are clipped
     * by the restore.
     */
    @Test
    void unclippedHandles_areClippedToTheBackendsKeyGroups() throws Exception {
        SavepointHarness h = harness(128);
        KeyGroupRange all = h.range(1, 0);
        AbstractKeyedStateBackend<String> source = h.create(HASHMAP, all, List.of());
        StateModel.write(source, all, 128);
        KeyedStateHandle sp = h.savepoint(source);
        for (int i = 0; i < 2; i++) {
            KeyGroupRange range = h.range(2, i);
            StateModel.verify(h.create(DISAGGREGATED, range, List.of(sp)), range, 128);
        }
    }

    /**
     * Serializer compatibility on a canonical restore is checked as on a normal restore: a state
     * whose new descriptor enables TTL is migrated; an incompatible state serializer and an
     * incompatible key serializer fail naming the cause.
     */
    @Test
    void serializerChanges_areMigratedOrRefused() throws Exception {
        SavepointHarness h = harness(128);
        KeyGroupRange all = h.range(1, 0);
        AbstractKeyedStateBackend<String> source = h.create(HASHMAP, all, List.of());
        StateModel.write(source, all, 128);
        KeyedStateHandle sp = h.savepoint(source);

        AbstractKeyedStateBackend<String> migrated = h.create(DISAGGREGATED, all, List.of(sp));
        ValueStateDescriptor<Long> withTtl =
                new ValueStateDescriptor<>(StateModel.VALUE.getName(), LongSerializer.INSTANCE);
        withTtl.enableTimeToLive(
                org.apache.flink.api.common.state.StateTtlConfig.newBuilder(
                                java.time.Duration.ofDays(1))
                        .build());
        for (int i = 1; i < 50; i++) {
            if (i % 7 == 0) {
                continue;
            }
            migrated.setCurrentKey(StateModel.key(i));
            ValueState<Long> v =
                    StateModel.state(migrated, VoidNamespace.INSTANCE, StateModel.VOID, withTtl);
            assertThat(v.value()).as("key %s after enabling TTL", i).isEqualTo(i * 10L);
        }

        AbstractKeyedStateBackend<String> refused = h.create(DISAGGREGATED, all, List.of(sp));
        ValueStateDescriptor<String> wrongType =
                new ValueStateDescriptor<>(StateModel.VALUE.getName(), StringSerializer.INSTANCE);
        assertThatThrownBy(
                        () ->
                                StateModel.state(
                                        refused,
                                        VoidNamespace.INSTANCE,
                                        StateModel.VOID,
                                        wrongType))
                .hasStackTraceContaining("StateMigrationException")
                .hasStackTraceContaining("value");

        assertThatThrownBy(
                        () ->
                                h.create(
                                        h.backend(DISAGGREGATED),
                                        all,
                                        List.of(sp),
                                        LongSerializer.INSTANCE))
                .hasRootCauseInstanceOf(StateMigrationException.class)
                .hasStackTraceContaining("key serializer");
    }

    /**
     * TTL's cleanup in full snapshots applies to canonical savepoints, as in Flink's backends:
     * expired values, list elements and map entries are not written; live ones are (checked by
     * restoring with the clock set back, so that nothing is hidden on access).
     */
    @Test
    void ttlCleanupInFullSnapshot_dropsExpiredEntries() throws Exception {
        SavepointHarness h = harness(128);
        KeyGroupRange all = h.range(1, 0);
        StateTtlConfig ttl =
                StateTtlConfig.newBuilder(Duration.ofMillis(100)).cleanupFullSnapshot().build();
        ValueStateDescriptor<Long> value = new ValueStateDescriptor<>("v", LongSerializer.INSTANCE);
        ListStateDescriptor<Long> list = new ListStateDescriptor<>("l", LongSerializer.INSTANCE);
        MapStateDescriptor<Long, Long> map =
                new MapStateDescriptor<>("m", LongSerializer.INSTANCE, LongSerializer.INSTANCE);
        value.enableTimeToLive(ttl);
        list.enableTimeToLive(ttl);
        map.enableTimeToLive(ttl);
        AbstractKeyedStateBackend<String> b = h.create(DISAGGREGATED, all, List.of());
        for (long t : new long[] {1000, 1080}) { // expired at 1150, live at 1150
            h.setTime(t);
            for (int i = 0; i < 60; i++) {
                b.setCurrentKey(StateModel.key(i));
                if ((i % 2 == 0) == (t == 1000)) {
                    StateModel.state(b, VoidNamespace.INSTANCE, StateModel.VOID, value).update(t);
                }
                StateModel.state(b, VoidNamespace.INSTANCE, StateModel.VOID, list).add(t);
                StateModel.state(b, VoidNamespace.INSTANCE, StateModel.VOID, map).put(t, t);
            }
        }
        h.setTime(1150);
        KeyedStateHandle sp = h.savepoint(b);

        h.setTime(1000);
        AbstractKeyedStateBackend<String> r = h.create(HASHMAP, all, List.of(sp));
        for (int i = 0; i < 60; i++) {
            r.setCurrentKey(StateModel.key(i));
            assertThat(StateModel.state(r, VoidNamespace.INSTANCE, StateModel.VOID, value).value())
                    .isEqualTo(i % 2 == 0 ? null : 1080L);
            assertThat(StateModel.state(r, VoidNamespace.INSTANCE, StateModel.VOID, list).get())
                    .containsExactly(1080L);
            MapState<Long, Long> m =
                    StateModel.state(r, VoidNamespace.INSTANCE, StateModel.VOID, map);
            assertThat(m.keys()).containsExactly(1080L);
        }
    }

    /** A backend without state writes no savepoint handle. */
    @Test
    void emptyBackend_writesNoHandle() throws Exception {
        SavepointHarness h = harness(128);
        AbstractKeyedStateBackend<String> b = h.create(DISAGGREGATED, h.range(1, 0), List.of());
        assertThat(h.savepoint(b)).isNull();
    }
}
