package io.github.flinkstate.changelog.upload;

import io.github.flinkstate.changelog.format.SegmentEncoder;
import java.io.IOException;
import java.util.List;
import javax.annotation.concurrent.GuardedBy;
import javax.annotation.concurrent.ThreadSafe;
import org.apache.flink.runtime.state.changelog.StateChange;

/**
 * The changes one writer appended under one sequence number, sealed and ready for upload; it
 * becomes exactly one segment of one DSTL file.
 *
 * <p>Its segment is encoded (ordered and compressed) once, by whoever asks first ({@link #encode}):
 * the writer has change sets encoded ahead of time on an upload thread, so that a checkpoint has
 * little left to encode; a re-upload after a reset reuses the encoding.
 *
 * <p>Thread safety: the changes are immutable after sealing; {@link #encode} is synchronized (a
 * second caller waits for the running encoding).
 */
@ThreadSafe
public final class ChangeSet {

    private final long sequenceNumber;
    private final List<StateChange> changes;
    private final long rawBytes;

    @GuardedBy("this")
    private byte[] segment;

    /** The setting {@link #segment} was encoded with. */
    @GuardedBy("this")
    private boolean compressed;

    /**
     * @param sequenceNumber the writer-local sequence number of all these changes
     * @param changes the changes in append order, not empty
     * @param rawBytes the sum of the change payload sizes (used for batching and back-pressure)
     */
    public ChangeSet(long sequenceNumber, List<StateChange> changes, long rawBytes) {
        this.sequenceNumber = sequenceNumber;
        this.changes = changes;
        this.rawBytes = rawBytes;
    }

    public long sequenceNumber() {
        return sequenceNumber;
    }

    public List<StateChange> changes() {
        return changes;
    }

    public long rawBytes() {
        return rawBytes;
    }

    /** The encoded segment, encoded on the first call (or when asked with another setting). */
    public synchronized byte[] encode(boolean compress) throws IOException {
        if (segment == null || compressed != compress) {
            segment = SegmentEncoder.encode(changes, compress);
            compressed = compress;
        }
        return segment;
    }

    @Override
    public String toString() {
        return "ChangeSet{sqn=" + sequenceNumber + ", changes=" + changes.size() + "}";
    }
}
