package io.github.flinkstate.disagg.engine.cache;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;

/**
 * One local file of the {@link DiskCache}, and the unit in which the disk tier evicts: either a
 * slab of cached blocks ({@link DiskSlab}) or the whole-file copy of an SST the store wrote ({@link
 * LocalFileCopy}). Reads are positional on one shared {@link FileChannel}, so concurrent readers do
 * not queue behind each other (a whole-file copy reads through its memory mapping while it has one,
 * see {@link LocalFileCopy}).
 *
 * <p>Thread safety: {@link #read} and {@link #write} may run on any thread at any time; once {@link
 * #drop} has closed the channel, they fail with {@link ClosedChannelException}, which the cache
 * treats as a miss. A {@link FileChannel} is interruptible: a thread interrupted during a read or
 * write (Flink cancelling a task, or an aborted savepoint's thread) closes the channel for every
 * thread. That thread fails with {@link ClosedByInterruptException}; any other thread that finds
 * the channel closed while the unit is not dropped reopens it (once per call) and goes on, so one
 * thread's interrupt costs the others nothing and the unit stays cached. The channel is swapped
 * under this object's monitor, and {@link #drop} marks the unit dropped under it, so no reopen
 * follows a drop; {@link #bytes} is guarded by the owning cache's lock.
 */
abstract class DiskUnit {

    final File file;
    private volatile FileChannel channel;
    private volatile boolean dropped;

    /** Set once by {@link #open}, before {@link #channel} is published. */
    private boolean writable;

    /** Bytes this unit occupies on disk, charged to the cache's capacity. */
    long bytes;

    DiskUnit(File file) {
        this.file = file;
    }

    /** Opens the unit's file for reading (and, for a slab, for writing). */
    void open(boolean writable) throws IOException {
        this.writable = writable;
        channel = openChannel(writable);
    }

    /**
     * The unit's file opened for reading, and for writing if {@link #writable}; {@code createNew}
     * creates it (failing if it exists), else it must exist.
     */
    private FileChannel openChannel(boolean createNew) throws IOException {
        if (!writable) {
            return FileChannel.open(file.toPath(), StandardOpenOption.READ);
        }
        return createNew
                ? FileChannel.open(
                        file.toPath(),
                        StandardOpenOption.CREATE_NEW,
                        StandardOpenOption.READ,
                        StandardOpenOption.WRITE)
                : FileChannel.open(
                        file.toPath(), StandardOpenOption.READ, StandardOpenOption.WRITE);
    }

    /**
     * Reads exactly {@code length} bytes at {@code position}.
     *
     * @throws java.io.EOFException if the file is shorter (truncated behind our back)
     * @throws ClosedChannelException if the unit was dropped, or this thread was interrupted
     */
    byte[] read(long position, int length) throws IOException {
        for (int attempt = 0; ; attempt++) {
            FileChannel ch = channel;
            try {
                return readFully(ch, position, length);
            } catch (ClosedChannelException e) {
                reopenAfter(ch, e, attempt);
            }
        }
    }

    /**
     * Writes {@code data} at {@code position}.
     *
     * @throws ClosedChannelException if the unit was dropped, or this thread was interrupted
     */
    void write(long position, byte[] data) throws IOException {
        for (int attempt = 0; ; attempt++) {
            FileChannel ch = channel;
            ByteBuffer buf = ByteBuffer.wrap(data);
            try {
                while (buf.hasRemaining()) {
                    ch.write(buf, position + buf.position());
                }
                return;
            } catch (ClosedChannelException e) {
                reopenAfter(ch, e, attempt);
            }
        }
    }

    /**
     * After {@code closed} failed with {@code e}: rethrows it if this thread was interrupted, the
     * unit dropped or this call already reopened once; else reopens the channel (unless another
     * thread already did) for the caller to try again.
     */
    private synchronized void reopenAfter(FileChannel closed, ClosedChannelException e, int attempt)
            throws IOException {
        if (dropped
                || attempt > 0
                || e instanceof ClosedByInterruptException
                || Thread.currentThread().isInterrupted()) {
            throw e;
        }
        if (channel == closed) {
            channel = openChannel(false);
        }
    }

    private byte[] readFully(FileChannel ch, long position, int length) throws IOException {
        byte[] out = new byte[length];
        ByteBuffer buf = ByteBuffer.wrap(out);
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
        FileChannel ch;
        synchronized (this) { // no reopen after this
            dropped = true;
            ch = channel;
        }
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
