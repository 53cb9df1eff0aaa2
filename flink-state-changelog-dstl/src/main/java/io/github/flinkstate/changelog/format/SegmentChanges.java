package io.github.flinkstate.changelog.format;

import java.io.IOException;
import java.util.NoSuchElementException;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;
import javax.annotation.Nullable;
import org.apache.flink.runtime.state.changelog.StateChange;

/**
 * The changes of one segment whose stored payload was read and checksummed already, decoded one at
 * a time: a compressed payload is inflated through a small window instead of into one array of
 * {@code raw-length} bytes, and no list of all changes is built. Restores replay millions of
 * changes, and materializing whole segments (a pre-emptive upload's segment holds megabytes) made
 * every segment allocate its full raw size plus one object per change before the first was applied.
 *
 * <p>{@link #next()} throws a {@link CorruptSegmentException} (naming file and offset) when the
 * payload does not hold exactly {@code count} well-formed changes of {@code raw-length} bytes in
 * total; the checks are the same as an eager decode's, only made as the changes are read. Since the
 * CRC32C covers the stored payload and was verified before, such an error means a writer bug, not
 * damaged bytes.
 *
 * <p>Not thread-safe: one reader thread. {@link #close()} releases the inflater; it is also
 * released after the last change.
 */
public final class SegmentChanges implements AutoCloseable {

    private static final int WINDOW_BYTES = 64 * 1024;

    private final boolean keyGroupOrdered;
    private final int storedBytes;
    private final String file;
    private final long offset;
    private final int count;
    private final long rawLength;

    /** Null for a plain payload, which is read from {@link #buffer} (the stored bytes) directly. */
    @Nullable private final Inflater inflater;

    /** Decoded bytes not consumed yet: {@code buffer[position, limit)}. */
    private byte[] buffer;

    private int position;
    private int limit;
    private int read;
    private long rawRead;
    private boolean closed;

    SegmentChanges(
            byte[] stored,
            boolean compressed,
            boolean keyGroupOrdered,
            int count,
            int rawLength,
            String file,
            long offset)
            throws CorruptSegmentException {
        this.keyGroupOrdered = keyGroupOrdered;
        this.storedBytes = stored.length;
        this.file = file;
        this.offset = offset;
        this.count = count;
        this.rawLength = rawLength;
        if (compressed) {
            this.inflater = new Inflater(true);
            inflater.setInput(stored);
            this.buffer = new byte[(int) Math.min(WINDOW_BYTES, Math.max(8, rawLength))];
            this.limit = 0;
        } else {
            this.inflater = null;
            this.buffer = stored;
            this.limit = stored.length;
        }
        if (count == 0) {
            finish();
        }
    }

    /**
     * Whether the writer stored the changes in key-group order ({@link
     * SegmentFormat#FLAG_KEY_GROUP_ORDER}).
     */
    public boolean keyGroupOrdered() {
        return keyGroupOrdered;
    }

    /** The stored (possibly compressed) payload size, held in memory until closed. */
    public int storedBytes() {
        return storedBytes;
    }

    /** Whether another change follows. */
    public boolean hasNext() {
        return read < count;
    }

    /** Decodes the next change. */
    public StateChange next() throws IOException {
        if (read >= count) {
            throw new NoSuchElementException();
        }
        if (rawLength - rawRead < 8 || !fill(8)) {
            throw corrupt("payload ends inside change " + read, null);
        }
        int keyGroup = readInt();
        int length = readInt();
        rawRead += 8;
        if (length < 0 || length > rawLength - rawRead || keyGroup < -1) {
            throw corrupt(
                    String.format(
                            "malformed change %d (key group %d, length %d)",
                            read, keyGroup, length),
                    null);
        }
        byte[] bytes = new byte[length];
        readFully(bytes);
        rawRead += length;
        read++;
        if (read == count) {
            finish();
        }
        return keyGroup == SegmentFormat.META_KEY_GROUP
                ? StateChange.ofMetadataChange(bytes)
                : StateChange.ofDataChange(keyGroup, bytes);
    }

    private int readInt() {
        byte[] b = buffer;
        int p = position;
        position = p + 4;
        return ((b[p] & 0xFF) << 24)
                | ((b[p + 1] & 0xFF) << 16)
                | ((b[p + 2] & 0xFF) << 8)
                | (b[p + 3] & 0xFF);
    }

    /** Makes at least {@code n} (at most the window size) bytes available; false at the end. */
    private boolean fill(int n) throws CorruptSegmentException {
        if (limit - position >= n) {
            return true;
        }
        if (inflater == null) {
            return false;
        }
        System.arraycopy(buffer, position, buffer, 0, limit - position);
        limit -= position;
        position = 0;
        while (limit < n) {
            int inflated = inflate(buffer, limit, buffer.length - limit);
            if (inflated == 0) {
                return false;
            }
            limit += inflated;
        }
        return true;
    }

    private void readFully(byte[] target) throws CorruptSegmentException {
        int copied = Math.min(limit - position, target.length);
        System.arraycopy(buffer, position, target, 0, copied);
        position += copied;
        while (copied < target.length) {
            int inflated = inflater == null ? 0 : inflate(target, copied, target.length - copied);
            if (inflated == 0) {
                throw corrupt(
                        String.format("decompressed fewer bytes than the expected %d", rawLength),
                        null);
            }
            copied += inflated;
        }
    }

    /** Inflates into {@code target}; 0 only when the stream ended or has no more input. */
    private int inflate(byte[] target, int from, int length) throws CorruptSegmentException {
        try {
            while (true) {
                int n = inflater.inflate(target, from, length);
                if (n > 0) {
                    return n;
                }
                if (inflater.finished() || inflater.needsInput() || inflater.needsDictionary()) {
                    return 0;
                }
            }
        } catch (DataFormatException e) {
            throw corrupt("cannot decompress payload", e);
        }
    }

    /**
     * After the last change: the changes must fill exactly {@code raw-length} bytes, and a plain
     * payload must end there (a compressed one may end with bytes the inflater never needs, as with
     * an eager decode, which also only compares the decompressed length).
     */
    private void finish() throws CorruptSegmentException {
        if (rawRead != rawLength) {
            throw corrupt(
                    (rawLength - rawRead) + " trailing bytes after " + count + " changes", null);
        }
        if (inflater == null && position != limit) {
            throw corrupt("payload is longer than its header says (" + rawLength + ")", null);
        }
        close();
    }

    private CorruptSegmentException corrupt(String problem, Throwable cause) {
        close();
        return new CorruptSegmentException(file, offset, problem, cause);
    }

    @Override
    public void close() {
        if (inflater != null && !closed) {
            closed = true;
            inflater.end();
        }
    }
}
