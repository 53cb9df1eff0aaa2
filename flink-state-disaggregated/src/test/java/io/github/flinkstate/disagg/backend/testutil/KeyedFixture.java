package io.github.flinkstate.disagg.backend.testutil;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.internal.InternalListState;
import org.apache.flink.runtime.state.internal.InternalMapState;
import org.apache.flink.runtime.state.internal.InternalValueState;

/**
 * Test helper: a deterministic content of value, list and map state for keys {@code 0 .. keys-1}
 * (version {@code v} of it, so later writes can be told from earlier ones), written into and
 * checked against the backends that own the keys' key groups.
 */
public final class KeyedFixture {

    public static final ValueStateDescriptor<Long> VALUE =
            new ValueStateDescriptor<>("value", LongSerializer.INSTANCE);
    public static final ListStateDescriptor<String> LIST =
            new ListStateDescriptor<>("list", StringSerializer.INSTANCE);
    public static final MapStateDescriptor<Integer, String> MAP =
            new MapStateDescriptor<>("map", IntSerializer.INSTANCE, StringSerializer.INSTANCE);

    private static final String PAD = "x".repeat(64);

    private final int keys;

    public KeyedFixture(int keys) {
        this.keys = keys;
    }

    public static boolean owns(KeyGroupRange range, int key) {
        return range.contains(
                KeyGroupRangeAssignment.assignToKeyGroup(key, DisaggBackends.MAX_PARALLELISM));
    }

    /** Writes version {@code v} of every key that {@code b} owns; returns how many. */
    public int write(AbstractKeyedStateBackend<Integer> b, int v) throws Exception {
        InternalValueState<Integer, VoidNamespace, Long> value = value(b);
        InternalListState<Integer, VoidNamespace, String> list = list(b);
        InternalMapState<Integer, VoidNamespace, Integer, String> map = map(b);
        int n = 0;
        for (int k = 0; k < keys; k++) {
            if (!owns(b.getKeyGroupRange(), k)) {
                continue;
            }
            n++;
            b.setCurrentKey(k);
            value.update((long) k * 1000 + v);
            list.update(java.util.List.of("a" + k + "/" + v + PAD, "b" + k + "/" + v));
            map.put(1, "one" + k + "/" + v + PAD);
            map.put(2, "two" + k + "/" + v);
        }
        return n;
    }

    /** Checks that {@code b} holds version {@code v} of every key it owns; returns how many. */
    public int verify(AbstractKeyedStateBackend<Integer> b, int v) throws Exception {
        InternalValueState<Integer, VoidNamespace, Long> value = value(b);
        InternalListState<Integer, VoidNamespace, String> list = list(b);
        InternalMapState<Integer, VoidNamespace, Integer, String> map = map(b);
        int n = 0;
        for (int k = 0; k < keys; k++) {
            if (!owns(b.getKeyGroupRange(), k)) {
                continue;
            }
            n++;
            b.setCurrentKey(k);
            assertThat(value.value()).as("value of key %s", k).isEqualTo((long) k * 1000 + v);
            assertThat(list.get())
                    .as("list of key %s", k)
                    .containsExactly("a" + k + "/" + v + PAD, "b" + k + "/" + v);
            assertThat(map.get(1)).as("map of key %s", k).isEqualTo("one" + k + "/" + v + PAD);
            assertThat(map.get(2)).as("map of key %s", k).isEqualTo("two" + k + "/" + v);
        }
        assertThat(b.getKeys(VALUE.getName(), VoidNamespace.INSTANCE).count())
                .as("keys of %s", b.getKeyGroupRange())
                .isEqualTo(n);
        return n;
    }

    /** Reads the value of the first key {@code b} owns (one point read). */
    public Long readFirst(AbstractKeyedStateBackend<Integer> b) throws Exception {
        for (int k = 0; k < keys; k++) {
            if (owns(b.getKeyGroupRange(), k)) {
                b.setCurrentKey(k);
                return value(b).value();
            }
        }
        return null;
    }

    // The fixture's states in the void namespace. getOrCreateKeyedState caches the state per name,
    // as operators get it; a restored state may be registered only once (Flink's serializer
    // providers refuse a second registration).

    @SuppressWarnings("unchecked")
    public static InternalValueState<Integer, VoidNamespace, Long> value(
            AbstractKeyedStateBackend<Integer> b) throws Exception {
        InternalValueState<Integer, VoidNamespace, Long> s =
                (InternalValueState<Integer, VoidNamespace, Long>)
                        b.getOrCreateKeyedState(VoidNamespaceSerializer.INSTANCE, VALUE);
        s.setCurrentNamespace(VoidNamespace.INSTANCE);
        return s;
    }

    @SuppressWarnings("unchecked")
    public static InternalListState<Integer, VoidNamespace, String> list(
            AbstractKeyedStateBackend<Integer> b) throws Exception {
        InternalListState<Integer, VoidNamespace, String> s =
                (InternalListState<Integer, VoidNamespace, String>)
                        b.getOrCreateKeyedState(VoidNamespaceSerializer.INSTANCE, LIST);
        s.setCurrentNamespace(VoidNamespace.INSTANCE);
        return s;
    }

    @SuppressWarnings("unchecked")
    public static InternalMapState<Integer, VoidNamespace, Integer, String> map(
            AbstractKeyedStateBackend<Integer> b) throws Exception {
        InternalMapState<Integer, VoidNamespace, Integer, String> s =
                (InternalMapState<Integer, VoidNamespace, Integer, String>)
                        b.getOrCreateKeyedState(VoidNamespaceSerializer.INSTANCE, MAP);
        s.setCurrentNamespace(VoidNamespace.INSTANCE);
        return s;
    }
}
