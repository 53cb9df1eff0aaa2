package io.github.flinkstate.disagg.engine.cache;

import java.io.File;
import java.io.IOException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;

/**
 * A whole local copy of one SST file the store wrote (write-through): any range of the file can be
 * read from it at its original offset. Entered into the {@link DiskCache} only once the copy is
 * complete and its length equals the file's, and never written again: so it may be read through a
 * {@link ReadOnlyMapping} (no system call per read) when the cache maps whole files; else, or if
 * the mapping could not be made, with positional reads as any {@link DiskUnit}.
 *
 * <p>Thread safety: as {@link DiskUnit}.
 */
final class LocalFileCopy extends DiskUnit {

    final String sourceFile;

    /**
     * The file's last bytes as they were written into the copy ({@link WriteThrough#END_BYTES} or
     * fewer): the SST format checksums its blocks and footer, but not the trailer's version byte,
     * which decides how the rest is decoded, so reads that reach the end compare these.
     */
    final byte[] end;

    /**
     * The mapping reads go through; null: positional reads on the channel (also once {@link #unmap}
     * dropped it, since a dropped mapping returns null).
     */
    private final ReadOnlyMapping mapping;

    /** Why mapping was asked for and failed (the copy is then read with system calls), or null. */
    final IOException mappingFailure;

    LocalFileCopy(File file, String sourceFile, long length, byte[] end, boolean map)
            throws IOException {
        super(file);
        this.sourceFile = sourceFile;
        this.bytes = length;
        this.end = end;
        open(false);
        ReadOnlyMapping mapped = null;
        IOException failure = null;
        if (map) {
            // the JDK's map call fails on a thread whose interrupt flag is set (a flush or
            // compaction thread being stopped), which is no refusal by the system: the flag is
            // set aside for the call (it does not block) and restored after
            boolean interrupted = Thread.interrupted();
            // a channel of its own, closed at once: the mapping outlives it
            try (FileChannel ch = FileChannel.open(file.toPath(), StandardOpenOption.READ)) {
                mapped = ReadOnlyMapping.map(file, ch, length);
            } catch (ClosedByInterruptException e) {
                // interrupted during the call: read with system calls, and no refusal either
                interrupted = true;
            } catch (IOException e) { // e.g. the kernel's limit of mappings reached
                failure = e;
            } catch (RuntimeException e) {
                failure = new IOException(e);
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        this.mapping = mapped;
        this.mappingFailure = failure;
    }

    /** Whether reads go through a memory mapping. */
    boolean isMapped() {
        return mapping != null && !mapping.isDropped();
    }

    /**
     * Reads through the mapping while there is one, else with the unit's channel (which fails as
     * closed once the copy is dropped: a miss for the cache).
     */
    @Override
    byte[] read(long position, int length) throws IOException {
        if (mapping != null) {
            byte[] data = mapping.read(position, length);
            if (data != null) {
                return data;
            }
        }
        return super.read(position, length);
    }

    /** Reads with system calls from now on; the mapping goes once no read is in progress. */
    void unmap() {
        if (mapping != null) {
            mapping.drop();
        }
    }

    /** Unmaps (once no read is in progress), then closes and deletes as every unit. */
    @Override
    void drop() {
        unmap();
        super.drop();
    }

    /**
     * Whether {@code data}, read at {@code position}, agrees with {@link #end} where it overlaps
     * the file's last bytes.
     */
    boolean endMatches(long position, byte[] data) {
        long endStart = bytes - end.length;
        for (long at = Math.max(position, endStart); at < position + data.length; at++) {
            if (data[(int) (at - position)] != end[(int) (at - endStart)]) {
                return false;
            }
        }
        return true;
    }
}
