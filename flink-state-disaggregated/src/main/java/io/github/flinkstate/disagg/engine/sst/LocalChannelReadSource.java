package io.github.flinkstate.disagg.engine.sst;

import java.io.EOFException;
import java.io.File;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.StandardOpenOption;

/**
 * A {@link ReadSource} for point reads of a file on the local file system: one positional read
 * ({@code pread}) per request on a {@link FileChannel} of its own. Flink's local input stream needs
 * three system calls for the same read (its {@code seek} asks for the position, then sets it, then
 * it reads), which was most of a cold point read's time.
 *
 * <p>A request is split into pieces of at most {@link #PIECE} bytes: the channel copies a heap read
 * through a temporary direct buffer that the JDK keeps per thread, so the pieces bound that buffer.
 * The channel is interruptible: a read on an interrupted thread (Flink cancelling a task) closes it
 * and fails with {@link java.nio.channels.ClosedByInterruptException}; the pool then drops this
 * source, as after any failed read, and no other thread ever shares it.
 *
 * <p>Thread safety: none (one thread at a time, see {@link StreamPool}).
 */
final class LocalChannelReadSource implements ReadSource {

    /** Largest single positional read. */
    static final int PIECE = 64 << 10;

    private final FileChannel channel;

    private LocalChannelReadSource(FileChannel channel) {
        this.channel = channel;
    }

    /**
     * Opens {@code file} for reading.
     *
     * @throws FileNotFoundException if it does not exist
     */
    static LocalChannelReadSource open(File file) throws IOException {
        try {
            return new LocalChannelReadSource(
                    FileChannel.open(file.toPath(), StandardOpenOption.READ));
        } catch (NoSuchFileException e) {
            FileNotFoundException f = new FileNotFoundException(file + " does not exist");
            f.initCause(e);
            throw f;
        }
    }

    @Override
    public void readFully(long position, byte[] buf, int off, int len) throws IOException {
        int done = 0;
        while (done < len) {
            ByteBuffer piece = ByteBuffer.wrap(buf, off + done, Math.min(PIECE, len - done));
            int n = channel.read(piece, position + done);
            if (n < 0) {
                throw new EOFException("end of file after " + (position + done) + " bytes");
            }
            done += n;
        }
    }

    @Override
    public boolean positional() {
        return true;
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
