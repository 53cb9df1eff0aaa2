package io.github.flinkstate.disagg.backend.ttl;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.backend.KeyLayout;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.runtime.state.ttl.TtlStateFactory.TtlSerializer;
import org.junit.jupiter.api.Test;

/**
 * Which states {@link TtlCompactionFilters} filters and how (descriptors as Flink's TTL factory
 * registers them: TTL config plus {@code TtlSerializer}), and the periodic compaction time it asks
 * the engine for.
 */
class TtlCompactionFiltersTest {

    private static final long DAY = Duration.ofDays(1).toMillis();

    private static ValueStateDescriptor<?> value(String name, StateTtlConfig ttl) {
        ValueStateDescriptor<?> d =
                new ValueStateDescriptor<>(
                        name,
                        new TtlSerializer<>(LongSerializer.INSTANCE, StringSerializer.INSTANCE));
        d.enableTimeToLive(ttl);
        return d;
    }

    private static StateTtlConfig.Builder ttl() {
        return StateTtlConfig.newBuilder(Duration.ofMillis(100));
    }

    private static byte[] stored(int flagBytes, long ts) {
        return ByteBuffer.allocate(flagBytes + 8 + 3).position(flagBytes).putLong(ts).array();
    }

    @Test
    void rules_followTheTtlConfigAndTheValueFormat() {
        assertThat(TtlCompactionFilters.ruleOf(value("a", ttl().build()))).isNotNull();
        assertThat(
                        TtlCompactionFilters.ruleOf(
                                value("b", ttl().disableCleanupInBackground().build())))
                .as("no cleanup in the background")
                .isNull();
        assertThat(
                        TtlCompactionFilters.ruleOf(
                                value(
                                        "c",
                                        ttl().disableCleanupInBackground()
                                                .cleanupInRocksdbCompactFilter(7)
                                                .build())))
                .as("explicit compaction-filter strategy")
                .extracting(TtlEntryRule::queryTimeAfterNumEntries)
                .isEqualTo(7L);
        assertThat(
                        TtlCompactionFilters.ruleOf(
                                new ValueStateDescriptor<>("plain", StringSerializer.INSTANCE)))
                .isNull();

        ListStateDescriptor<?> list =
                new ListStateDescriptor<>(
                        "l",
                        new TtlSerializer<>(LongSerializer.INSTANCE, StringSerializer.INSTANCE));
        list.enableTimeToLive(ttl().build());
        TtlEntryRule element = TtlCompactionFilters.ruleOf(list);
        assertThat(element.expired(stored(0, 0), 100)).isTrue();
        assertThat(element.expired(stored(0, 1), 100)).isFalse();

        MapStateDescriptor<?, ?> map =
                new MapStateDescriptor<>(
                        "m",
                        IntSerializer.INSTANCE,
                        new TtlSerializer<>(LongSerializer.INSTANCE, StringSerializer.INSTANCE));
        map.enableTimeToLive(ttl().build());
        TtlEntryRule entry = TtlCompactionFilters.ruleOf(map);
        assertThat(entry.expired(stored(1, 0), 100)).as("timestamp after the null flag").isTrue();
        byte[] nullValue = stored(1, 0);
        nullValue[0] = 1;
        assertThat(entry.expired(nullValue, 100)).as("null map value: kept").isFalse();
        assertThat(entry.expired(new byte[] {0, 1, 2}, 100)).as("too short: kept").isFalse();
    }

    @Test
    void runs_dropOnlyExpiredEntriesOfFilteredStates() {
        long[] now = {50};
        TtlCompactionFilters filters = new TtlCompactionFilters(() -> now[0]);
        assertThat(filters.newRun()).isNull();
        assertThat(filters.active()).isFalse();
        int id = KeyLayout.stateId("a");
        filters.configure(id, value("a", ttl().build()));
        byte[] key = KeyLayout.statePrefix(3, id);
        byte[] other = KeyLayout.statePrefix(3, KeyLayout.stateId("other"));
        now[0] = 100;
        var run = filters.newRun();
        assertThat(run.drop(key, stored(0, 0))).isTrue();
        assertThat(run.drop(key, stored(0, 50))).isFalse();
        assertThat(run.drop(other, stored(0, 0))).isFalse();
        filters.remove(id);
        assertThat(filters.newRun()).isNull();
        assertThat(run.drop(key, stored(0, 0)))
                .as("a run keeps the rules it started with")
                .isTrue();
    }

    @Test
    void periodicCompaction_isTheShortestAnyFilteredStateAsksFor() {
        TtlCompactionFilters filters = new TtlCompactionFilters(() -> 0);
        assertThat(filters.periodicCompactionMillis(30 * DAY)).as("no filtered state").isZero();

        filters.configure(1, value("a", ttl().build()));
        assertThat(filters.periodicCompactionMillis(30 * DAY)).as("the option").isEqualTo(30 * DAY);
        assertThat(filters.periodicCompactionMillis(0)).as("option off").isZero();

        filters.configure(
                2,
                value("b", ttl().cleanupInRocksdbCompactFilter(1000, Duration.ofDays(2)).build()));
        assertThat(filters.periodicCompactionMillis(30 * DAY)).isEqualTo(2 * DAY);
        assertThat(filters.periodicCompactionMillis(0))
                .as("the state's own time")
                .isEqualTo(2 * DAY);

        filters.configure(
                3,
                value(
                        "c",
                        ttl().cleanupInRocksdbCompactFilter(1000, Duration.ofSeconds(1)).build()));
        assertThat(filters.periodicCompactionMillis(30 * DAY))
                .as("bounded below")
                .isEqualTo(TtlCompactionFilters.MIN_PERIODIC_MILLIS);

        filters.remove(2);
        filters.remove(3);
        filters.configure(
                4, value("d", ttl().cleanupInRocksdbCompactFilter(1000, Duration.ZERO).build()));
        assertThat(filters.periodicCompactionMillis(30 * DAY))
                .as("a state turning it off does not turn it off for the others")
                .isEqualTo(30 * DAY);
        filters.remove(1);
        assertThat(filters.periodicCompactionMillis(30 * DAY)).isZero();
    }
}
