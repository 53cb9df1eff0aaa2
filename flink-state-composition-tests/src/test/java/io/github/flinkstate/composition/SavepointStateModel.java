package io.github.flinkstate.composition;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ReducingState;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.State;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.apache.flink.streaming.api.operators.TimerHeapInternalTimer;
import org.apache.flink.streaming.api.operators.TimerSerializer;
import org.apache.flink.util.CloseableIterator;

/**
 * Value, list, map and reducing state in two {@code String} namespaces, and a timer queue, written
 * through Flink's keyed state API with overwrites, clears and removals, and checked exactly (no
 * null map values: Flink's changelog backend cannot log them). Every value is a function of the
 * key's index and the namespace, so any backend holding any key groups can be checked against it.
 *
 * <p>Thread safety: test thread only. A backend's timer queue must be obtained once per backend
 * (through {@link #timers}), as Flink's timer service does.
 */
final class SavepointStateModel {

    static final int KEYS = 300;
    static final String[] NAMESPACES = {"window-1", "window-2"};

    static final ValueStateDescriptor<Long> VALUE =
            new ValueStateDescriptor<>("value", LongSerializer.INSTANCE);
    static final ListStateDescriptor<String> LIST =
            new ListStateDescriptor<>("list", StringSerializer.INSTANCE);
    static final MapStateDescriptor<Integer, String> MAP =
            new MapStateDescriptor<>("map", IntSerializer.INSTANCE, StringSerializer.INSTANCE);
    static final ReducingStateDescriptor<Long> REDUCING =
            new ReducingStateDescriptor<>("reducing", Long::sum, LongSerializer.INSTANCE);
    static final TimerSerializer<String, String> TIMER_SERIALIZER =
            new TimerSerializer<>(StringSerializer.INSTANCE, StringSerializer.INSTANCE);

    private SavepointStateModel() {}

    static String key(int i) {
        return "key-" + i;
    }

    /** The event-time timer queue, as Flink's timer service names it. */
    static KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<String, String>> timers(
            KeyedStateBackend<String> b) {
        return b.create("_timer_state/event_user-timers", TIMER_SERIALIZER);
    }

    /** Writes every key of {@code range}; {@code timers} is {@code b}'s queue. */
    static void write(
            KeyedStateBackend<String> b,
            KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<String, String>> timers,
            KeyGroupRange range,
            int maxParallelism)
            throws Exception {
        for (int i = 0; i < KEYS; i++) {
            if (!in(range, i, maxParallelism)) {
                continue;
            }
            b.setCurrentKey(key(i));
            for (int n = 0; n < NAMESPACES.length; n++) {
                String ns = NAMESPACES[n];
                ValueState<Long> value = state(b, ns, VALUE);
                value.update(-1L); // overwritten below: only the last write may survive
                value.update(i * 10L + n);
                if ((i + n) % 7 == 0) {
                    value.clear();
                }
                ListState<String> list = state(b, ns, LIST);
                list.add("a" + i + ns);
                list.add("b" + i + ns);
                if (i % 5 == n) {
                    list.clear();
                }
                MapState<Integer, String> map = state(b, ns, MAP);
                map.put(1, "one-" + i + ns);
                map.put(2, "two-" + i + ns);
                if (i % 3 == 0) {
                    map.put(2, "two-again-" + i + ns);
                }
                map.put(3, "removed");
                map.remove(3);
                ReducingState<Long> reducing = state(b, ns, REDUCING);
                reducing.add((long) i);
                reducing.add((long) n + 1);
                timers.add(new TimerHeapInternalTimer<>(1000L + i, key(i), ns));
                timers.add(new TimerHeapInternalTimer<>(2000L + i, key(i), ns));
                if (i % 2 == n) {
                    timers.remove(new TimerHeapInternalTimer<>(2000L + i, key(i), ns));
                }
            }
        }
    }

    /** Checks every key of {@code range} exactly, and that {@code b} has no other key. */
    static void verify(KeyedStateBackend<String> b, KeyGroupRange range, int maxParallelism)
            throws Exception {
        Set<String> expectedTimers = new HashSet<>();
        int[] valuesPerNamespace = new int[NAMESPACES.length];
        int keysInRange = 0;
        for (int i = 0; i < KEYS; i++) {
            if (!in(range, i, maxParallelism)) {
                continue;
            }
            keysInRange++;
            b.setCurrentKey(key(i));
            for (int n = 0; n < NAMESPACES.length; n++) {
                String ns = NAMESPACES[n];
                String at = key(i) + " in " + ns + " of " + b.getClass().getSimpleName();
                boolean cleared = (i + n) % 7 == 0;
                assertThat(state(b, ns, VALUE).value())
                        .as(at)
                        .isEqualTo(cleared ? null : i * 10L + n);
                valuesPerNamespace[n] += cleared ? 0 : 1;
                Iterable<String> list = state(b, ns, LIST).get();
                if (i % 5 == n) {
                    assertThat(list).as(at).isNullOrEmpty();
                } else {
                    assertThat(list).as(at).containsExactly("a" + i + ns, "b" + i + ns);
                }
                MapState<Integer, String> map = state(b, ns, MAP);
                assertThat(map.keys()).as(at).containsExactlyInAnyOrder(1, 2);
                assertThat(map.get(1)).as(at).isEqualTo("one-" + i + ns);
                assertThat(map.get(2))
                        .as(at)
                        .isEqualTo((i % 3 == 0 ? "two-again-" : "two-") + i + ns);
                assertThat(state(b, ns, REDUCING).get()).as(at).isEqualTo(i + n + 1L);
                expectedTimers.add(key(i) + "/" + ns + "@" + (1000L + i));
                if (i % 2 != n) {
                    expectedTimers.add(key(i) + "/" + ns + "@" + (2000L + i));
                }
            }
        }
        assertThat(keysInRange).as("keys in %s", range).isPositive();
        for (int n = 0; n < NAMESPACES.length; n++) {
            assertThat(b.getKeys(VALUE.getName(), NAMESPACES[n]).count())
                    .as("keys with a value in %s, %s", NAMESPACES[n], range)
                    .isEqualTo(valuesPerNamespace[n]);
        }
        Set<String> actualTimers = new HashSet<>();
        try (CloseableIterator<TimerHeapInternalTimer<String, String>> it = timers(b).iterator()) {
            while (it.hasNext()) {
                TimerHeapInternalTimer<String, String> t = it.next();
                actualTimers.add(t.getKey() + "/" + t.getNamespace() + "@" + t.getTimestamp());
            }
        }
        assertThat(actualTimers).as("timers in %s", range).isEqualTo(expectedTimers);
    }

    private static boolean in(KeyGroupRange range, int i, int maxParallelism) {
        return range.contains(KeyGroupRangeAssignment.assignToKeyGroup(key(i), maxParallelism));
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static <S extends State> S state(
            KeyedStateBackend<String> b, String namespace, StateDescriptor<S, ?> descriptor)
            throws Exception {
        return (S)
                b.getPartitionedState(
                        namespace, StringSerializer.INSTANCE, (StateDescriptor) descriptor);
    }
}
