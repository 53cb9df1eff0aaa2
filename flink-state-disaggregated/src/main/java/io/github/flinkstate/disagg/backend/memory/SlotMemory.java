package io.github.flinkstate.disagg.backend.memory;

import io.github.flinkstate.disagg.engine.cache.BlockMemory;
import io.github.flinkstate.disagg.engine.memtable.WriteBufferBudget;
import org.apache.flink.runtime.memory.MemoryManager;
import org.apache.flink.runtime.memory.OpaqueMemoryResource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JVM-heap memory that all disaggregated keyed backends of one task slot share: one block
 * memory (the memory tier of their block caches, one CLOCK order) and one memtable budget. The
 * split is fixed when the first backend of the slot acquires it; later backends join it.
 *
 * <p>It is a shared resource of the slot's {@link MemoryManager}, acquired with {@code
 * getExternalSharedMemoryResource}: Flink keeps one instance per slot and closes it when the last
 * backend that acquired it closes its lease. It is not taken from Flink's managed memory, which is
 * off-heap, while these caches live on the heap (see docs/disaggregated.md, "Memory").
 *
 * <p>Thread safety: immutable; its parts are thread-safe.
 */
public final class SlotMemory implements AutoCloseable {

    /** The shared-resource type under which the slot's instance is kept. */
    static final String RESOURCE_TYPE = "disaggregated-state-slot-memory";

    private static final Logger LOG = LoggerFactory.getLogger(SlotMemory.class);

    private final BlockMemory blockMemory;
    private final WriteBufferBudget writeBuffers;

    /**
     * Splits {@code totalBytes}: {@code writeBufferRatio} of it for memtables, the rest cache, of
     * which the backends' row caches may take {@code rowCacheRatio} together.
     */
    public SlotMemory(long totalBytes, double writeBufferRatio, double rowCacheRatio) {
        long writeBufferBytes = Math.max(1, (long) (totalBytes * writeBufferRatio));
        this.writeBuffers = new WriteBufferBudget(writeBufferBytes);
        this.blockMemory = new BlockMemory(totalBytes - writeBufferBytes, rowCacheRatio);
    }

    /**
     * The slot's instance, created with {@code totalBytes} and {@code writeBufferRatio} if this is
     * the first backend of the slot to ask; close the returned lease when the backend is disposed.
     */
    public static OpaqueMemoryResource<SlotMemory> acquire(
            MemoryManager slotMemoryManager,
            long totalBytes,
            double writeBufferRatio,
            double rowCacheRatio)
            throws Exception {
        return slotMemoryManager.getExternalSharedMemoryResource(
                RESOURCE_TYPE,
                size -> {
                    SlotMemory m = new SlotMemory(size, writeBufferRatio, rowCacheRatio);
                    LOG.info(
                            "Disaggregated state memory of this slot: {} bytes of block cache (rows"
                                    + " up to {} of it) and {} bytes of memtables (JVM heap)",
                            m.blockMemory.capacityBytes(),
                            m.blockMemory.rowCapacityBytes(),
                            m.writeBuffers.limitBytes());
                    return m;
                },
                totalBytes);
    }

    /** A lease on an instance of the caller's own, for backends that have no slot. */
    public static OpaqueMemoryResource<SlotMemory> unshared(
            long totalBytes, double writeBufferRatio, double rowCacheRatio) {
        return new OpaqueMemoryResource<>(
                new SlotMemory(totalBytes, writeBufferRatio, rowCacheRatio), totalBytes, () -> {});
    }

    public BlockMemory blockMemory() {
        return blockMemory;
    }

    public WriteBufferBudget writeBuffers() {
        return writeBuffers;
    }

    /** Nothing to free: the memory is the stores' heap objects, gone with the stores. */
    @Override
    public void close() {}
}
