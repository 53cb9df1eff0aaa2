package io.github.flinkstate.disagg.backend.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.disagg.backend.DisaggregatedKeyedStateBackend;
import io.github.flinkstate.disagg.backend.testutil.DisaggBackends;
import java.io.File;
import java.util.List;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.filesystem.FsCheckpointStreamFactory;
import org.apache.flink.runtime.testutils.statemigration.TestType;
import org.apache.flink.util.StateMigrationException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A map state's user keys are part of the stored keys, so this backend, like Flink's RocksDB
 * backend, cannot migrate them: a restored map state registered with a user-key serializer that
 * needs migration is refused with a {@link StateMigrationException}, while a value serializer that
 * needs migration rewrites the values. Found in a review: the backend accepted the new key
 * serializer, migrated only the values, and then found no entry under its old keys ({@code get}
 * null, {@code contains} false, iteration failing inside the new serializer).
 */
class MapUserKeyMigrationTest {

    @TempDir File tmp;

    private DisaggBackends backends;

    @AfterEach
    void close() throws Exception {
        if (backends != null) {
            backends.close();
        }
    }

    private static MapStateDescriptor<TestType, TestType> map(
            TypeSerializer<TestType> keys, TypeSerializer<TestType> values) {
        return new MapStateDescriptor<>("m", keys, values);
    }

    private static MapState<TestType, TestType> state(
            DisaggregatedKeyedStateBackend<Integer> b, MapStateDescriptor<TestType, TestType> d)
            throws Exception {
        return b.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, d);
    }

    private KeyedStateHandle writeAndCheckpoint() throws Exception {
        DisaggregatedKeyedStateBackend<Integer> b = backends.create(DisaggBackends.ALL, List.of());
        MapState<TestType, TestType> m =
                state(
                        b,
                        map(
                                new TestType.V1TestTypeSerializer(),
                                new TestType.V1TestTypeSerializer()));
        for (int k = 0; k < 20; k++) {
            b.setCurrentKey(k);
            m.put(new TestType("key", k), new TestType("value", k * 10));
        }
        Path chk = new Path(new File(tmp, "chk").toURI());
        KeyedStateHandle h =
                DisaggBackends.snapshot(
                                b,
                                1L,
                                new FsCheckpointStreamFactory(
                                        FileSystem.getLocalFileSystem(),
                                        new Path(chk, "chk-1"),
                                        new Path(chk, "shared"),
                                        1024,
                                        4096),
                                CheckpointOptions.forCheckpointWithDefaultLocation())
                        .getJobManagerOwnedSnapshot();
        backends.dispose(b);
        return h;
    }

    @Test
    void userKeySerializerNeedingMigration_isRefused_valueSerializerIsMigrated() throws Exception {
        backends = DisaggBackends.inLocalDir(new File(tmp, "primary"), "1mb");
        KeyedStateHandle checkpoint = writeAndCheckpoint();

        DisaggregatedKeyedStateBackend<Integer> newKeys =
                backends.create(DisaggBackends.ALL, List.of(checkpoint));
        assertThatThrownBy(
                        () ->
                                state(
                                        newKeys,
                                        map(
                                                new TestType.V2TestTypeSerializer(),
                                                new TestType.V1TestTypeSerializer())))
                .hasStackTraceContaining(StateMigrationException.class.getName())
                .hasStackTraceContaining("key");
        backends.dispose(newKeys);

        DisaggregatedKeyedStateBackend<Integer> newValues =
                backends.create(DisaggBackends.ALL, List.of(checkpoint));
        MapState<TestType, TestType> m =
                state(
                        newValues,
                        map(
                                new TestType.V1TestTypeSerializer(),
                                new TestType.V2TestTypeSerializer()));
        for (int k = 0; k < 20; k++) {
            newValues.setCurrentKey(k);
            assertThat(m.get(new TestType("key", k))).isEqualTo(new TestType("value", k * 10));
            assertThat(m.keys()).containsExactly(new TestType("key", k));
        }
    }
}
