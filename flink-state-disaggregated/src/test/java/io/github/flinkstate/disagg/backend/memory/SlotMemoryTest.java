package io.github.flinkstate.disagg.backend.memory;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.DisaggregatedOptions;
import io.github.flinkstate.disagg.DisaggregatedStateBackend;
import io.github.flinkstate.disagg.backend.DisaggregatedKeyedStateBackend;
import io.github.flinkstate.disagg.backend.testutil.DisaggBackends;
import io.github.flinkstate.disagg.engine.LsmStore;
import java.io.File;
import java.util.List;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.runtime.memory.MemoryManager;
import org.apache.flink.runtime.memory.OpaqueMemoryResource;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The keyed backends of one task slot (one {@link MemoryManager}) share one block memory and one
 * memtable budget, sized by {@code memory.per-slot}; backends of another slot have their own; a
 * configured {@code block-cache-size} gives a backend a cache of its own; the slot's instance lives
 * until its last backend is disposed.
 */
class SlotMemoryTest {

    @TempDir File tmp;

    private DisaggregatedStateBackend backend(String dir) {
        return DisaggBackends.backend(
                        new File(tmp, dir).toURI().toString(), MemorySize.parse("4mb"))
                .with(DisaggregatedOptions.MEMORY_PER_SLOT, MemorySize.parse("40mb"))
                .with(DisaggregatedOptions.WRITE_BUFFER_RATIO, 0.25);
    }

    @Test
    void backendsOfOneSlot_shareTheirMemory_otherSlotsHaveTheirOwn() throws Exception {
        try (DisaggBackends slot = new DisaggBackends(backend("one"));
                DisaggBackends otherSlot = new DisaggBackends(backend("two"))) {
            LsmStore a = slot.create(DisaggBackends.ranges(2).get(0), List.of()).store();
            LsmStore b = slot.create(DisaggBackends.ranges(2).get(1), List.of()).store();
            LsmStore c = otherSlot.create(DisaggBackends.ALL, List.of()).store();

            assertThat(a.blockCache()).isNotSameAs(b.blockCache());
            assertThat(a.blockCache().memory()).isSameAs(b.blockCache().memory());
            assertThat(a.writeBufferBudget()).isSameAs(b.writeBufferBudget());
            assertThat(c.blockCache().memory()).isNotSameAs(a.blockCache().memory());
            assertThat(c.writeBufferBudget()).isNotSameAs(a.writeBufferBudget());

            assertThat(a.blockCache().capacityBytes()).isEqualTo(30L << 20);
            assertThat(a.writeBufferBudget().limitBytes()).isEqualTo(10L << 20);
        }
    }

    @Test
    void writesOfBothBackends_countAgainstTheSlotsMemtableBudget() throws Exception {
        try (DisaggBackends slot = new DisaggBackends(backend("one"))) {
            DisaggregatedKeyedStateBackend<Integer> a =
                    slot.create(DisaggBackends.ranges(2).get(0), List.of());
            DisaggregatedKeyedStateBackend<Integer> b =
                    slot.create(DisaggBackends.ranges(2).get(1), List.of());
            write(a, 0, 200);
            write(b, 1000, 300);
            long charged = a.store().chargedMemtableBytes() + b.store().chargedMemtableBytes();
            assertThat(a.store().chargedMemtableBytes()).isPositive();
            assertThat(b.store().chargedMemtableBytes()).isPositive();
            assertThat(a.store().writeBufferBudget().usedBytes()).isEqualTo(charged);

            a.store().flush();
            b.store().flush();
            write(a, 0, 200); // reads open the flushed files: their metadata is charged
            assertThat(a.store().blockCache().pinnedMetadataBytes()).isPositive();
            assertThat(a.store().blockCache().memory().pinnedBytes())
                    .isEqualTo(
                            a.store().blockCache().pinnedMetadataBytes()
                                    + b.store().blockCache().pinnedMetadataBytes());

            slot.dispose(a);
            assertThat(b.store().writeBufferBudget().usedBytes())
                    .as("a disposed backend gives its memtables' bytes back")
                    .isEqualTo(b.store().chargedMemtableBytes());
            assertThat(b.store().blockCache().memory().pinnedBytes())
                    .as("and its files' metadata")
                    .isEqualTo(b.store().blockCache().pinnedMetadataBytes());
        }
    }

    @Test
    void theSlotInstance_livesUntilItsLastBackendIsDisposed() throws Exception {
        MemoryManager memoryManager = MemoryManager.create(1 << 20, 4096);
        OpaqueMemoryResource<SlotMemory> first =
                SlotMemory.acquire(memoryManager, 8 << 20, 0.25, 0);
        OpaqueMemoryResource<SlotMemory> second =
                SlotMemory.acquire(memoryManager, 99 << 20, 0.5, 0);
        assertThat(second.getResourceHandle())
                .as("later acquirers join the slot's instance, whatever size they ask for")
                .isSameAs(first.getResourceHandle());
        assertThat(first.getResourceHandle().blockMemory().capacityBytes()).isEqualTo(6L << 20);
        first.close();
        OpaqueMemoryResource<SlotMemory> third =
                SlotMemory.acquire(memoryManager, 8 << 20, 0.25, 0);
        assertThat(third.getResourceHandle()).isSameAs(second.getResourceHandle());
        second.close();
        third.close();
        OpaqueMemoryResource<SlotMemory> fresh =
                SlotMemory.acquire(memoryManager, 8 << 20, 0.25, 0);
        assertThat(fresh.getResourceHandle())
                .as("all leases closed: the next backend of the slot starts a new instance")
                .isNotSameAs(first.getResourceHandle());
        fresh.close();
        assertThat(memoryManager.verifyEmpty()).as("no managed memory is taken").isTrue();
        memoryManager.shutdown();
    }

    @Test
    void aConfiguredBlockCacheSize_givesTheBackendACacheOfItsOwn() throws Exception {
        DisaggregatedStateBackend own =
                backend("own").with(DisaggregatedOptions.BLOCK_CACHE_SIZE, MemorySize.parse("3mb"));
        try (DisaggBackends slot = new DisaggBackends(own)) {
            LsmStore a = slot.create(DisaggBackends.ranges(2).get(0), List.of()).store();
            LsmStore b = slot.create(DisaggBackends.ranges(2).get(1), List.of()).store();
            assertThat(a.blockCache().capacityBytes()).isEqualTo(3L << 20);
            assertThat(a.blockCache().memory()).isNotSameAs(b.blockCache().memory());
            assertThat(a.writeBufferBudget())
                    .as("the memtables still share the slot's budget")
                    .isSameAs(b.writeBufferBudget());
        }
    }

    /** Read-modify-write of the backend's own keys among {@code count} from {@code firstKey}. */
    private static void write(DisaggregatedKeyedStateBackend<Integer> b, int firstKey, int count)
            throws Exception {
        ValueState<String> state =
                b.getPartitionedState(
                        VoidNamespace.INSTANCE,
                        VoidNamespaceSerializer.INSTANCE,
                        new ValueStateDescriptor<>("v", StringSerializer.INSTANCE));
        for (int k = firstKey; k < firstKey + count; k++) {
            int key = k;
            // only keys of this backend's key groups
            if (!b.getKeyGroupRange()
                    .contains(
                            org.apache.flink.runtime.state.KeyGroupRangeAssignment.assignToKeyGroup(
                                    key, DisaggBackends.MAX_PARALLELISM))) {
                continue;
            }
            b.setCurrentKey(key);
            String previous = state.value(); // a read: files flushed before are opened
            state.update(previous == null ? "value-" + key : previous + "+");
        }
    }
}
