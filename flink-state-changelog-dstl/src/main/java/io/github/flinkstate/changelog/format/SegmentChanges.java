package io.github.flinkstate.changelog.format;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.util.NoSuchElementException;
import java.util.zip.Inflater;
import java.util.zip.InflaterInputStream;
import java.util.zip.ZipException;
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
    private final DataInputStream payload;
    private final Inflater inflater;
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
        InputStream in = new ByteArrayInputStream(stored);
        if (compressed) {
            this.inflater = new Inflater(true);
            this.payload =
                    new DataInputStream(
                            new InflaterInputStream(
                                    in, inflater, Math.min(WINDOW_BYTES, stored.length + 1)));
        } else {
            this.inflater = null;
            this.payload = new DataInputStream(in);
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
        int keyGroup;
        int length;
        byte[] bytes;
        try {
            if (rawLength - rawRead < 8) {
                throw corrupt("payload ends inside change " + read, null);
            }
            keyGroup = payload.readInt();
            length = payload.readInt();
            rawRead += 8;
            if (length < 0 || length > rawLength - rawRead || keyGroup < -1) {
                throw corrupt(
                        String.format(
                                "malformed change %d (key group %d, length %d)",
                                read, keyGroup, length),
                        null);
            }
            bytes = new byte[length];
            payload.readFully(bytes);
            rawRead += length;
        } catch (EOFException e) {
            throw corrupt(
                    String.format("decompressed fewer bytes than the expected %d", rawLength), e);
        } catch (ZipException e) {
            throw corrupt("cannot decompress payload", e);
        }
        read++;
        if (read == count) {
            finish();
        }
        return keyGroup == SegmentFormat.META_KEY_GROUP
                ? StateChange.ofMetadataChange(bytes)
                : StateChange.ofDataChange(keyGroup, bytes);
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
        if (inflater == null) {
            try {
                if (payload.read() != -1) {
                    throw corrupt(
                            "payload is longer than its header says (" + rawLength + ")", null);
                }
            } catch (CorruptSegmentException e) {
                throw e;
            } catch (IOException e) {
                throw corrupt("cannot read payload", e);
            }
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
