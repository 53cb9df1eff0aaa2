package io.github.flinkstate.disagg.engine.cache;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;

/**
 * One local file of the {@link DiskCache}, and the unit in which the disk tier evicts: either a
 * slab of cached blocks ({@link DiskSlab}) or the whole-file copy of an SST the store wrote ({@link
 * LocalFileCopy}). Reads are positional on one shared {@link FileChannel}, so concurrent readers do
 * not queue behind each other.
 *
 * <p>Thread safety: {@link #read} may run on any thread at any time; once {@link #drop} has closed
 * the channel, a read fails with {@link ClosedChannelException}, which the cache treats as a miss.
 * A {@link FileChannel} is interruptible: a thread interrupted during a read (Flink cancelling a
 * task) closes the channel for everyone, and the cache then drops the unit like any unreadable one
 * (a lost cache unit, never a wrong read). {@link #bytes} is guarded by the owning cache's lock.
 */
abstract class DiskUnit {

    final File file;
    private volatile FileChannel channel;
    private volatile boolean dropped;

    /** Bytes this unit occupies on disk, charged to the cache's capacity. */
    long bytes;

    DiskUnit(File file) {
        this.file = file;
    }

    /** Opens the unit's file for reading (and, for a slab, for writing). */
    void open(boolean writable) throws IOException {
        channel =
                writable
                        ? FileChannel.open(
                                file.toPath(),
                                StandardOpenOption.CREATE_NEW,
                                StandardOpenOption.READ,
                                StandardOpenOption.WRITE)
                        : FileChannel.open(file.toPath(), StandardOpenOption.READ);
    }

    FileChannel channel() {
        return channel;
    }

    /**
     * Reads exactly {@code length} bytes at {@code position}.
     *
     * @throws java.io.EOFException if the file is shorter (truncated behind our back)
     */
    byte[] read(long position, int length) throws IOException {
        byte[] out = new byte[length];
        ByteBuffer buf = ByteBuffer.wrap(out);
        FileChannel ch = channel;
        while (buf.hasRemaining()) {
            int n = ch.read(buf, position + buf.position());
            if (n < 0) {
                throw new java.io.EOFException(
                        "local cache file "
                                + file
                                + " ends before "
                                + (position + length)
                                + " (read at "
                                + position
                                + ")");
            }
        }
        return out;
    }

    boolean isDropped() {
        return dropped;
    }

    /** Closes and deletes the local file (best effort); later reads fail. Idempotent. */
    void drop() {
        dropped = true;
        FileChannel ch = channel;
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException ignored) {
                // deleting is what frees the space
            }
        }
        try {
            Files.deleteIfExists(file.toPath());
        } catch (IOException ignored) {
            // the directory is wiped when the cache closes
        }
    }
}
