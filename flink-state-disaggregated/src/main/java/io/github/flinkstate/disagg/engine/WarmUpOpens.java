package io.github.flinkstate.disagg.engine;

import io.github.flinkstate.disagg.engine.version.FileMeta;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * Which files a {@link WarmUp} opens before it copies anything, in order, and how much of the
 * memory cache their metadata (index and bloom filter, charged there) may take: the first {@code
 * always} files (the L0 files: every get probes them) whatever it costs; the next {@code hinted}
 * (the files the snapshot's cache hint names: the job read them, and the hinted fill reads only
 * open files) while {@code roomForHinted} says so; the rest while {@code room} does (a read opens
 * such a file when it needs it anyway).
 *
 * <p>Thread safety: immutable; the suppliers are called from the warm-up's opener threads.
 *
 * @param files the files to open, in order
 * @param always how many of the first files to open in any case
 * @param hinted how many files after those to open while {@code roomForHinted} holds
 * @param room whether the memory cache has room for more files' metadata
 * @param roomForHinted the same for hinted files, with a larger share
 */
record WarmUpOpens(
        List<FileMeta> files,
        int always,
        int hinted,
        BooleanSupplier room,
        BooleanSupplier roomForHinted) {

    /** Whether the {@code i}-th file may be opened now. */
    boolean mayOpen(int i) {
        if (i < always) {
            return true;
        }
        return i < always + hinted ? roomForHinted.getAsBoolean() : room.getAsBoolean();
    }
}
