package io.github.flinkstate.disagg.backend.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.disagg.backend.DisaggregatedKeyedStateBackend;
import io.github.flinkstate.disagg.backend.testutil.DisaggBackends;
import io.github.flinkstate.disagg.engine.iterator.LsmIterator;
import java.io.File;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * List entries holding several elements: {@code addAll} and {@code update} of a list without TTL
 * write one engine entry, {@code add} one per element, a TTL list one per element; reads see every
 * element in order either way, and a damaged entry fails with a message naming the damage.
 */
class ListEntryValuesTest {

    @TempDir File tmp;

    @Test
    void roundTrip_oneAndSeveralElements() throws IOException {
        List<String> out = new ArrayList<>();
        ListEntryValues.readInto(
                ListEntryValues.write(List.of("a"), StringSerializer.INSTANCE),
                StringSerializer.INSTANCE,
                out);
        ListEntryValues.readInto(
                ListEntryValues.write(List.of("b,", "", "c"), StringSerializer.INSTANCE),
                StringSerializer.INSTANCE,
                out);
        assertThat(out).containsExactly("a", "b,", "", "c");
    }

    @Test
    void missingDelimiter_failsNamingTheDamage() throws IOException {
        byte[] two = ListEntryValues.write(List.of(1L, 2L), LongSerializer.INSTANCE);
        two[8] = 'x';
        assertThatThrownBy(
                        () ->
                                ListEntryValues.readInto(
                                        two, LongSerializer.INSTANCE, new ArrayList<>()))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("Corrupt list entry")
                .hasMessageContaining("byte 8 of 17");
    }

    @Test
    void addAllAndUpdate_writeOneEntry_addOnePerElement() throws Exception {
        try (DisaggBackends backends = backends()) {
            DisaggregatedKeyedStateBackend<Integer> b =
                    backends.create(DisaggBackends.ALL, List.of());
            ListState<Long> list =
                    b.getPartitionedState(
                            VoidNamespace.INSTANCE,
                            VoidNamespaceSerializer.INSTANCE,
                            new ListStateDescriptor<>("list", LongSerializer.INSTANCE));
            b.setCurrentKey(7);
            list.addAll(longs(0, 100));
            assertThat(entries(b)).isEqualTo(1);
            list.add(100L);
            list.addAll(longs(101, 103));
            assertThat(entries(b)).isEqualTo(3);
            assertThat(list.get()).containsExactlyElementsOf(longs(0, 103));

            list.update(longs(5, 8));
            assertThat(list.get()).containsExactlyElementsOf(longs(5, 8));
            b.setCurrentKey(8);
            assertThat(list.get()).isNull();
        }
    }

    @Test
    void ttlList_writesOneEntryPerElement() throws Exception {
        try (DisaggBackends backends = backends()) {
            DisaggregatedKeyedStateBackend<Integer> b =
                    backends.create(DisaggBackends.ALL, List.of());
            ListStateDescriptor<Long> desc =
                    new ListStateDescriptor<>("ttl-list", LongSerializer.INSTANCE);
            desc.enableTimeToLive(StateTtlConfig.newBuilder(Duration.ofHours(1)).build());
            ListState<Long> list =
                    b.getPartitionedState(
                            VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, desc);
            b.setCurrentKey(7);
            list.addAll(longs(0, 10));
            assertThat(entries(b)).isEqualTo(10);
            assertThat(list.get()).containsExactlyElementsOf(longs(0, 10));
        }
    }

    private DisaggBackends backends() {
        return new DisaggBackends(
                DisaggBackends.backend(
                        new File(tmp, "primary").toURI().toString(), MemorySize.parse("4mb")));
    }

    private static List<Long> longs(int from, int to) {
        return IntStream.range(from, to).mapToObj(i -> (long) i).collect(Collectors.toList());
    }

    /** Live engine entries of the store (one state, one key in these tests). */
    private static int entries(DisaggregatedKeyedStateBackend<Integer> b) throws IOException {
        int n = 0;
        try (LsmIterator it = b.store().scanAll()) {
            for (; it.isValid(); it.next()) {
                n++;
            }
        }
        return n;
    }
}
