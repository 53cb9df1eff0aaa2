package io.github.flinkstate.lru.snapshot;

import java.io.IOException;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeOffsets;

/**
 * The fixed header of a cache snapshot stream (see {@link CacheSnapshotFormat}): format checks and
 * the delegate's handle kind and key-group offsets. Immutable.
 */
public final class CacheStreamHeader {

    private final byte version;
    private final byte delegateKind;
    private final KeyGroupRangeOffsets delegateOffsets;

    private CacheStreamHeader(
            byte version, byte delegateKind, KeyGroupRangeOffsets delegateOffsets) {
        this.version = version;
        this.delegateKind = delegateKind;
        this.delegateOffsets = delegateOffsets;
    }

    /** Reads and validates the header; {@code source} names the stream in error messages. */
    public static CacheStreamHeader read(DataInputView in, String source) throws IOException {
        int magic = in.readInt();
        if (magic != CacheSnapshotFormat.MAGIC) {
            throw new IOException(
                    String.format(
                            "%s is not an LRU cache snapshot stream: magic 0x%08X at offset 0, expected 0x%08X",
                            source, magic, CacheSnapshotFormat.MAGIC));
        }
        byte version = in.readByte();
        if (version < CacheSnapshotFormat.MIN_READ_VERSION
                || version > CacheSnapshotFormat.VERSION) {
            throw new IOException(
                    source
                            + " has LRU cache snapshot format version "
                            + version
                            + " at offset 4; this build reads versions "
                            + CacheSnapshotFormat.MIN_READ_VERSION
                            + " to "
                            + CacheSnapshotFormat.VERSION);
        }
        byte kind = in.readByte();
        KeyGroupRangeOffsets offsets = null;
        if (kind == CacheSnapshotFormat.DELEGATE_KEY_GROUPS) {
            int first = in.readInt();
            int last = in.readInt();
            if (first < 0 || last < first || last - first > (1 << 15)) {
                throw new IOException(
                        source
                                + " has a corrupt key-group range ["
                                + first
                                + ", "
                                + last
                                + "] at offset 6");
            }
            long[] values = new long[last - first + 1];
            for (int i = 0; i < values.length; i++) {
                values[i] = in.readLong();
            }
            offsets = new KeyGroupRangeOffsets(new KeyGroupRange(first, last), values);
        } else if (kind != CacheSnapshotFormat.DELEGATE_NONE
                && kind != CacheSnapshotFormat.DELEGATE_INCREMENTAL) {
            throw new IOException(source + " has unknown delegate kind " + kind + " at offset 5");
        }
        return new CacheStreamHeader(version, kind, offsets);
    }

    /** The format version of the stream. */
    public byte version() {
        return version;
    }

    public byte delegateKind() {
        return delegateKind;
    }

    public KeyGroupRangeOffsets delegateOffsets() {
        return delegateOffsets;
    }
}
