package io.github.flinkstate.disagg.engine.sst;

import io.github.flinkstate.disagg.engine.key.Bytes;
import io.github.flinkstate.disagg.engine.key.EntryType;

import java.io.IOException;

/**
 * Encoding and cursor of a data block: a plain sequence of entries
 * {@code varint keyLen, key, varint seq, u8 type, [varint valueLen, value if PUT]}
 * in strictly increasing key order (docs/format/disagg-sst.md).
 *
 * <p>Thread safety: the payload is immutable and may be shared through the block cache; each
 * {@link Cursor} is confined to one thread.
 */
public final class DataBlock {

    private DataBlock() {}

    /** Appends one entry to a block being built. */
    public static void encodeEntry(ByteWriter out, byte[] key, long seq, byte type, byte[] value) {
        out.bytes(key);
        out.varint(seq);
        out.u8(type);
        if (type == EntryType.PUT) {
            out.bytes(value);
        }
    }

    /** A forward cursor over one block payload. */
    public static final class Cursor {
        private final ByteReader in;
        private final String file;
        private final long blockOffset;
        private byte[] key;
        private long seq;
        private byte type;
        private byte[] value;
        private boolean valid;

        public Cursor(byte[] payload, String file, long blockOffset) throws IOException {
            this.in = new ByteReader(payload, 0, payload.length);
            this.file = file;
            this.blockOffset = blockOffset;
            next();
        }

        public boolean valid() {
            return valid;
        }

        public void next() throws IOException {
            if (!in.hasRemaining()) {
                valid = false;
                return;
            }
            int at = in.position();
            try {
                key = in.bytes();
                seq = in.varint();
                type = (byte) in.u8();
                if (!EntryType.isValid(type)) {
                    throw new IOException("bad entry type " + type);
                }
                value = type == EntryType.PUT ? in.bytes() : null;
            } catch (IOException e) {
                throw new IOException("Malformed data block in " + file + " at offset "
                        + (blockOffset + at) + ": " + e.getMessage(), e);
            }
            valid = true;
        }

        /** Advances to the first entry with key >= target (from the current position). */
        public void seek(byte[] target) throws IOException {
            while (valid && Bytes.compare(key, target) < 0) {
                next();
            }
        }

        public byte[] key() {
            return key;
        }

        public long seq() {
            return seq;
        }

        public byte type() {
            return type;
        }

        public byte[] value() {
            return value;
        }
    }
}
