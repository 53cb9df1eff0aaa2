package io.github.flinkstate.disagg.engine.cache;

import java.io.EOFException;
import java.io.File;
import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.core.memory.MemoryUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A read-only memory mapping of one local cache file, read by copying out of it: a read of a page
 * the OS holds is a memory copy, with no system call (a positional read costs one per block, the
 * largest cost of a get when the state is on local disk). Used for whole-file copies, which never
 * change once committed.
 *
 * <p>The mapping is released explicitly ({@link #drop}), not when the garbage collector finds the
 * buffer: the space of a deleted local file is freed only once nothing maps it, and the disk cache
 * must get it back when it evicts, not at some later collection. Accessing an unmapped buffer
 * crashes the JVM, so every read holds the mapping: {@link #state} counts the reads in progress and
 * carries a dropped bit; once dropped, no read starts, and whichever of {@link #drop} and the last
 * read's end finds the count at zero unmaps.
 *
 * <p>A mapped page that the OS cannot supply (the file truncated behind the cache's back, or a disk
 * error) raises {@link InternalError} in the reading thread rather than an {@link IOException}; the
 * JVM may deliver it a little after the copy, in the caller. {@link DiskCache#read}, the SST
 * reader's local reads and {@code LsmStore.get} catch it ({@link DiskCache#absorbMappedFault}).
 *
 * <p>Thread safety: {@link #read} and {@link #drop} may run on any thread at any time.
 */
final class ReadOnlyMapping {

    /** The largest file mapped: one buffer addresses at most {@code Integer.MAX_VALUE} bytes. */
    static final long MAX_BYTES = Integer.MAX_VALUE;

    /**
     * Mappings the caches of this process hold at most together: a quarter of the kernel's limit of
     * mappings per process ({@code vm.max_map_count}, 65,530 by default), at most 16,384, so that
     * the heap, thread stacks and native libraries keep most of it. Copies beyond it are read with
     * system calls.
     */
    static final int PROCESS_LIMIT = Math.min(16_384, kernelMapLimit() / 4);

    /** Mappings held now by this process's caches (unmapped ones not counted). */
    private static final AtomicInteger LIVE = new AtomicInteger();

    /** Whether reaching {@link #PROCESS_LIMIT} was logged (once per process). */
    private static final AtomicBoolean LIMIT_LOGGED = new AtomicBoolean();

    private static final Logger LOG = LoggerFactory.getLogger(ReadOnlyMapping.class);

    private static final int DROPPED = 1 << 30;

    private final File file;
    private final MappedByteBuffer buffer;

    /** Reads in progress, plus {@link #DROPPED} once dropped. */
    private final AtomicInteger state = new AtomicInteger();

    private ReadOnlyMapping(File file, MappedByteBuffer buffer) {
        this.file = file;
        this.buffer = buffer;
    }

    /**
     * Maps the first {@code length} bytes of {@code channel} ({@code file}); null if the length
     * cannot be mapped as one buffer (empty, or larger than {@link #MAX_BYTES}) or the process's
     * caches hold {@link #PROCESS_LIMIT} mappings already.
     */
    static ReadOnlyMapping map(File file, FileChannel channel, long length) throws IOException {
        if (length <= 0 || length > MAX_BYTES) {
            return null;
        }
        if (LIVE.incrementAndGet() > PROCESS_LIMIT) {
            LIVE.decrementAndGet();
            if (!LIMIT_LOGGED.getAndSet(true)) {
                LOG.info(
                        "{} local cache files of this process are memory-mapped, the most it maps;"
                                + " further copies are read with system calls",
                        PROCESS_LIMIT);
            }
            return null;
        }
        boolean mapped = false;
        try {
            ReadOnlyMapping m =
                    new ReadOnlyMapping(
                            file, channel.map(FileChannel.MapMode.READ_ONLY, 0, length));
            mapped = true;
            return m;
        } finally {
            if (!mapped) {
                LIVE.decrementAndGet();
            }
        }
    }

    /** Mappings this process's caches hold now; for tests. */
    static int liveMappings() {
        return LIVE.get();
    }

    private static int kernelMapLimit() {
        try {
            // not Files.readString: a /proc file reports size 0, and it then read one byte
            return Integer.parseInt(
                    Files.readAllLines(Path.of("/proc/sys/vm/max_map_count")).get(0).trim());
        } catch (IOException | RuntimeException e) {
            return 65_530; // not Linux, or not readable: Linux's default
        }
    }

    /**
     * A copy of the {@code length} bytes at {@code position}, or null once dropped.
     *
     * @throws EOFException if the range is not inside the mapped length
     */
    byte[] read(long position, int length) throws IOException {
        if (!enter()) {
            return null;
        }
        try {
            if (position < 0 || length < 0 || position + length > buffer.capacity()) {
                throw new EOFException(
                        "local cache file "
                                + file
                                + " has "
                                + buffer.capacity()
                                + " bytes mapped, read of "
                                + length
                                + " at "
                                + position);
            }
            byte[] out = new byte[length];
            buffer.get((int) position, out, 0, length);
            return out;
        } finally {
            exit();
        }
    }

    /** Starts no more reads; unmaps once the reads in progress have ended. Idempotent. */
    void drop() {
        int before = state.getAndUpdate(s -> s | DROPPED);
        if (before == 0) {
            unmap();
        }
    }

    /** Whether {@link #drop} was called (reads in progress may still hold the buffer). */
    boolean isDropped() {
        return (state.get() & DROPPED) != 0;
    }

    /** Whether the buffer is unmapped (dropped, and no read was in progress); for tests. */
    boolean isUnmapped() {
        return state.get() == DROPPED;
    }

    private boolean enter() {
        while (true) {
            int s = state.get();
            if ((s & DROPPED) != 0) {
                return false;
            }
            if (state.compareAndSet(s, s + 1)) {
                return true;
            }
        }
    }

    private void exit() {
        if (state.decrementAndGet() == DROPPED) {
            unmap();
        }
    }

    private void unmap() {
        // Flink's own handle on the JDK's Unsafe: the only way to release a mapping before GC
        MemoryUtils.UNSAFE.invokeCleaner(buffer);
        LIVE.decrementAndGet();
    }
}
