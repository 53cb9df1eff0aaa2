package io.github.flinkstate.disagg.backend.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.disagg.backend.DisaggregatedKeyedStateBackend;
import io.github.flinkstate.disagg.backend.testutil.DisaggBackends;
import io.github.flinkstate.disagg.backend.testutil.KeyedFixture;
import java.io.File;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.internal.InternalMapState;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An entry of a map state's iteration that the iterator removed stays removed: {@code setValue} on
 * it fails and {@code getValue} returns null, as with Flink's RocksDB backend. Found in a review:
 * {@code setValue} wrote the mapping back.
 */
class MapEntryAfterRemoveTest {

    @TempDir File tmp;

    private DisaggBackends backends;

    @AfterEach
    void close() throws Exception {
        if (backends != null) {
            backends.close();
        }
    }

    @Test
    void anEntryRemovedThroughTheIterator_cannotBeSetAgain() throws Exception {
        backends = DisaggBackends.inLocalDir(new File(tmp, "primary"), "64kb");
        DisaggregatedKeyedStateBackend<Integer> b = backends.create(DisaggBackends.ALL, List.of());
        InternalMapState<Integer, VoidNamespace, Integer, String> map = KeyedFixture.map(b);
        b.setCurrentKey(7);
        map.put(1, "one");
        map.put(2, "two");
        Iterator<Map.Entry<Integer, String>> it = map.iterator();
        Map.Entry<Integer, String> first = it.next();
        it.remove();
        assertThatThrownBy(() -> first.setValue("again")).isInstanceOf(IllegalStateException.class);
        assertThat(first.getValue()).isNull();
        assertThat(map.contains(first.getKey())).isFalse();
        Map.Entry<Integer, String> second = it.next();
        second.setValue("TWO"); // a live entry still writes through
        assertThat(map.get(second.getKey())).isEqualTo("TWO");
    }
}
