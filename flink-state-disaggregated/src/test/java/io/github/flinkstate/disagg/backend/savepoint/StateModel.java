package io.github.flinkstate.disagg.backend.savepoint;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Collections;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.state.AggregatingState;
import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ReducingState;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.State;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.streaming.api.operators.TimerHeapInternalTimer;
import org.apache.flink.streaming.api.operators.TimerSerializer;
import org.apache.flink.util.CloseableIterator;

/**
 * A fixed set of keyed states and timers written through Flink's state API and checked exactly:
 * value, list, map (with null values), reducing and aggregating state, in the void namespace and in
 * {@code String} and {@code Long} namespaces (with {@code String} keys, states in {@code String}
 * namespaces have "ambiguous" canonical keys that carry lengths), three TTL-wrapped states, and a
 * timer queue. Every value is a function of the key's index, so any backend at any parallelism can
 * be checked against it.
 *
 * <p>Thread safety: test thread only.
 */
final class StateModel {

    static final int KEYS = 400;
    private static final StateTtlConfig TTL = StateTtlConfig.newBuilder(Duration.ofDays(1)).build();

    static final ValueStateDescriptor<Long> VALUE =
            new ValueStateDescriptor<>("value", LongSerializer.INSTANCE);
    static final ListStateDescriptor<String> LIST =
            new ListStateDescriptor<>("list", StringSerializer.INSTANCE);
    static final MapStateDescriptor<Integer, String> MAP =
            new MapStateDescriptor<>("map", IntSerializer.INSTANCE, StringSerializer.INSTANCE);
    static final ReducingStateDescriptor<Long> REDUCING =
            new ReducingStateDescriptor<>("reducing", Long::sum, LongSerializer.INSTANCE);
    static final AggregatingStateDescriptor<Long, Long, String> AGGREGATING =
            new AggregatingStateDescriptor<>("aggregating", new Sum(), LongSerializer.INSTANCE);
    static final ValueStateDescriptor<String> TTL_VALUE =
            ttl(new ValueStateDescriptor<>("ttl-value", StringSerializer.INSTANCE));
    static final ListStateDescriptor<Long> TTL_LIST =
            ttl(new ListStateDescriptor<>("ttl-list", LongSerializer.INSTANCE));
    static final MapStateDescriptor<String, Integer> TTL_MAP =
            ttl(
                    new MapStateDescriptor<>(
                            "ttl-map", StringSerializer.INSTANCE, IntSerializer.INSTANCE));
    static final String TIMERS = "timers";
    static final TimerSerializer<String, VoidNamespace> TIMER_SERIALIZER =
            new TimerSerializer<>(StringSerializer.INSTANCE, VoidNamespaceSerializer.INSTANCE);

    private StateModel() {}

    private static <D extends StateDescriptor<?, ?>> D ttl(D d) {
        d.enableTimeToLive(TTL);
        return d;
    }

    static String key(int i) {
        return "key-" + i;
    }

    static boolean inRange(int i, KeyGroupRange range, int maxParallelism) {
        return range.contains(KeyGroupRangeAssignment.assignToKeyGroup(key(i), maxParallelism));
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    static <N, S extends State> S state(
            AbstractKeyedStateBackend<String> b,
            N namespace,
            TypeSerializer<N> nsSerializer,
            StateDescriptor<S, ?> descriptor)
            throws Exception {
        return (S) b.getPartitionedState(namespace, nsSerializer, (StateDescriptor) descriptor);
    }

    /** The timer queue of {@code b}, created once per backend (as Flink's timer service does). */
    @SuppressWarnings("unchecked")
    static KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<String, VoidNamespace>> timers(
            AbstractKeyedStateBackend<String> b) {
        return (KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<String, VoidNamespace>>)
                QUEUES.computeIfAbsent(b, x -> b.create(TIMERS, TIMER_SERIALIZER));
    }

    private static final Map<AbstractKeyedStateBackend<?>, KeyGroupedInternalPriorityQueue<?>>
            QUEUES = Collections.synchronizedMap(new WeakHashMap<>());

    /** Writes the state of every key of {@code range}. */
    static void write(AbstractKeyedStateBackend<String> b, KeyGroupRange range, int maxParallelism)
            throws Exception {
        var timers = timers(b);
        for (int i = 0; i < KEYS; i++) {
            if (!inRange(i, range, maxParallelism)) {
                continue;
            }
            b.setCurrentKey(key(i));
            ValueState<Long> value = state(b, VoidNamespace.INSTANCE, VOID, VALUE);
            value.update(i * 10L);
            if (i % 7 == 0) {
                value.clear();
            }
            ListState<String> list = state(b, "a", STRING, LIST);
            list.add("x" + i);
            list.add("y" + i);
            if (i % 3 == 0) {
                ListState<String> listB = state(b, "b", STRING, LIST);
                listB.add("z" + i);
            }
            MapState<Integer, String> map = state(b, 1L, LONG, MAP);
            map.put(1, "one" + i);
            map.put(2, i % 5 == 0 ? null : "two" + i);
            if (i % 4 == 0) {
                MapState<Integer, String> map2 = state(b, 2L, LONG, MAP);
                map2.put(3, "three" + i);
            }
            ReducingState<Long> reducing = state(b, "r", STRING, REDUCING);
            reducing.add((long) i);
            reducing.add(1L);
            AggregatingState<Long, String> aggregating =
                    state(b, VoidNamespace.INSTANCE, VOID, AGGREGATING);
            aggregating.add((long) i);
            aggregating.add(2L);
            ValueState<String> ttlValue = state(b, VoidNamespace.INSTANCE, VOID, TTL_VALUE);
            ttlValue.update("t" + i);
            ListState<Long> ttlList = state(b, VoidNamespace.INSTANCE, VOID, TTL_LIST);
            ttlList.add((long) i);
            ttlList.add((long) -i);
            MapState<String, Integer> ttlMap = state(b, "m", STRING, TTL_MAP);
            ttlMap.put("m", i);
            timers.add(new TimerHeapInternalTimer<>(1000L + i, key(i), VoidNamespace.INSTANCE));
            if (i % 2 == 0) {
                timers.add(new TimerHeapInternalTimer<>(5000L + i, key(i), VoidNamespace.INSTANCE));
            }
        }
    }

    /**
     * Changes every key of {@code range} (and adds one), as a job does after a savepoint's
     * synchronous part; none of it may be in that savepoint.
     */
    static void overwrite(
            AbstractKeyedStateBackend<String> b, KeyGroupRange range, int maxParallelism)
            throws Exception {
        var timers = timers(b);
        for (int i = 0; i < KEYS + 1; i++) {
            if (!inRange(i, range, maxParallelism)) {
                continue;
            }
            b.setCurrentKey(key(i));
            ValueState<Long> value = state(b, VoidNamespace.INSTANCE, VOID, VALUE);
            value.update(-1L);
            ListState<String> list = state(b, "a", STRING, LIST);
            list.add("late");
            ListState<String> listB = state(b, "b", STRING, LIST);
            listB.clear();
            MapState<Integer, String> map = state(b, 1L, LONG, MAP);
            map.remove(1);
            map.put(9, "late");
            ReducingState<Long> reducing = state(b, "r", STRING, REDUCING);
            reducing.add(100L);
            ValueState<String> ttlValue = state(b, VoidNamespace.INSTANCE, VOID, TTL_VALUE);
            ttlValue.clear();
            timers.remove(new TimerHeapInternalTimer<>(1000L + i, key(i), VoidNamespace.INSTANCE));
            timers.add(new TimerHeapInternalTimer<>(9999L, key(i), VoidNamespace.INSTANCE));
        }
    }

    /** Checks every key of {@code range} exactly, and that no other key is there. */
    static void verify(AbstractKeyedStateBackend<String> b, KeyGroupRange range, int maxParallelism)
            throws Exception {
        Set<String> expectedTimers = new HashSet<>();
        int inRange = 0;
        int withValue = 0;
        for (int i = 0; i < KEYS + 1; i++) {
            if (!inRange(i, range, maxParallelism)) {
                continue;
            }
            b.setCurrentKey(key(i));
            ValueState<Long> value = state(b, VoidNamespace.INSTANCE, VOID, VALUE);
            if (i == KEYS) {
                assertThat(value.value()).as("a key written after the savepoint").isNull();
                continue;
            }
            inRange++;
            String at = "key " + i + " in " + b.getClass().getSimpleName();
            assertThat(value.value()).as(at).isEqualTo(i % 7 == 0 ? null : i * 10L);
            withValue += i % 7 == 0 ? 0 : 1;
            ListState<String> list = state(b, "a", STRING, LIST);
            assertThat(list.get()).as(at).containsExactly("x" + i, "y" + i);
            ListState<String> listB = state(b, "b", STRING, LIST);
            if (i % 3 == 0) {
                assertThat(listB.get()).as(at).containsExactly("z" + i);
            } else {
                assertThat(listB.get()).as(at).isNullOrEmpty();
            }
            MapState<Integer, String> map = state(b, 1L, LONG, MAP);
            assertThat(map.get(1)).as(at).isEqualTo("one" + i);
            assertThat(map.contains(2)).as(at).isTrue();
            assertThat(map.get(2)).as(at).isEqualTo(i % 5 == 0 ? null : "two" + i);
            assertThat(map.contains(9)).as(at).isFalse();
            MapState<Integer, String> map2 = state(b, 2L, LONG, MAP);
            assertThat(map2.get(3)).as(at).isEqualTo(i % 4 == 0 ? "three" + i : null);
            ReducingState<Long> reducing = state(b, "r", STRING, REDUCING);
            assertThat(reducing.get()).as(at).isEqualTo(i + 1L);
            AggregatingState<Long, String> aggregating =
                    state(b, VoidNamespace.INSTANCE, VOID, AGGREGATING);
            assertThat(aggregating.get()).as(at).isEqualTo("sum=" + (i + 2));
            ValueState<String> ttlValue = state(b, VoidNamespace.INSTANCE, VOID, TTL_VALUE);
            assertThat(ttlValue.value()).as(at).isEqualTo("t" + i);
            ListState<Long> ttlList = state(b, VoidNamespace.INSTANCE, VOID, TTL_LIST);
            assertThat(ttlList.get()).as(at).containsExactly((long) i, (long) -i);
            MapState<String, Integer> ttlMap = state(b, "m", STRING, TTL_MAP);
            assertThat(ttlMap.get("m")).as(at).isEqualTo(i);
            expectedTimers.add(key(i) + "@" + (1000L + i));
            if (i % 2 == 0) {
                expectedTimers.add(key(i) + "@" + (5000L + i));
            }
        }
        Set<String> actualTimers = new HashSet<>();
        try (CloseableIterator<TimerHeapInternalTimer<String, VoidNamespace>> it =
                timers(b).iterator()) {
            while (it.hasNext()) {
                TimerHeapInternalTimer<String, VoidNamespace> t = it.next();
                actualTimers.add(t.getKey() + "@" + t.getTimestamp());
            }
        }
        assertThat(actualTimers).isEqualTo(expectedTimers);
        assertThat(b.getKeys(VALUE.getName(), VoidNamespace.INSTANCE).count())
                .as("keys with a value in %s", range)
                .isEqualTo(withValue);
        assertThat(b.getKeys(TTL_VALUE.getName(), VoidNamespace.INSTANCE).count())
                .isEqualTo(inRange);
    }

    static final TypeSerializer<VoidNamespace> VOID = VoidNamespaceSerializer.INSTANCE;
    static final TypeSerializer<String> STRING = StringSerializer.INSTANCE;
    static final TypeSerializer<Long> LONG = LongSerializer.INSTANCE;

    /** Sums the inputs; the result is {@code "sum=" + total}. */
    static final class Sum implements AggregateFunction<Long, Long, String> {
        @Override
        public Long createAccumulator() {
            return 0L;
        }

        @Override
        public Long add(Long value, Long acc) {
            return acc + value;
        }

        @Override
        public String getResult(Long acc) {
            return "sum=" + acc;
        }

        @Override
        public Long merge(Long a, Long b) {
            return a + b;
        }
    }
}
