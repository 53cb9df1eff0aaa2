package io.github.flinkstate.disagg.engine.sst;

import io.github.flinkstate.disagg.engine.key.EntryType;
import io.github.flinkstate.disagg.engine.key.Versioned;
import java.io.IOException;
import java.util.Arrays;

/**
 * Encoding and cursor of a data block (docs/format/disagg-sst.md).
 *
 * <p>Entries are {@code varint keyLen, key, varint seq, u8 type, [varint valueLen, value if PUT]}
 * in strictly increasing key order. Version 1 payloads are just the entries; versions 2-4 append an
 * entry offset array ({@code u32 offset} of every entry, then {@code u32 count}) so a point lookup
 * binary-searches the block instead of scanning it. Version 5 stores each key as {@code varint
 * shared, varint unshared, suffix}: the first {@code shared} bytes are those of the previous key of
 * the block; every {@value #RESTART_INTERVAL}th entry, starting with the first, is a restart point
 * with {@code shared = 0}, and the offset array lists the restart points only. A lookup
 * binary-searches the restart points (their keys are whole, compared in place) and then scans at
 * most one interval.
 *
 * <p>Thread safety: the payload is immutable and may be shared through the block cache; each {@link
 * Cursor} is confined to one thread; {@link #get} is stateless.
 */
public final class DataBlock {

    /** Bytes of the v2 offset-array trailer per entry, plus {@link #COUNT_BYTES} once. */
    public static final int OFFSET_BYTES = 4;

    public static final int COUNT_BYTES = 4;

    /** Version 5: entries per restart point (the writer's choice; readers do not rely on it). */
    public static final int RESTART_INTERVAL = 16;

    private DataBlock() {}

    /**
     * Size of a block's offset array for {@code n} entries in {@code version} (0 for version 1).
     */
    public static int offsetArrayBytes(int version, int n) {
        return version < 2 ? 0 : offsetCount(version, n) * OFFSET_BYTES + COUNT_BYTES;
    }

    /**
     * Offsets the array of a block of {@code n} entries lists: every entry (versions 2-4) or every
     * restart point (version 5).
     */
    public static int offsetCount(int version, int n) {
        return version >= SstFormat.VERSION_5 ? (n + RESTART_INTERVAL - 1) / RESTART_INTERVAL : n;
    }

    /** Whether entry {@code i} (0-based in its block) is a restart point in {@code version}. */
    public static boolean isRestart(int version, int i) {
        return version < SstFormat.VERSION_5 || i % RESTART_INTERVAL == 0;
    }

    /**
     * Appends one version-5 entry: {@code shared} bytes of {@code key} are those of the previous
     * key of the block (0 at a restart point).
     */
    public static void encodePrefixedEntry(
            ByteWriter out, int shared, byte[] key, long seq, byte type, byte[] value) {
        out.varint(shared);
        out.varint(key.length - shared);
        out.raw(key, shared, key.length - shared);
        out.varint(seq);
        out.u8(type);
        if (type == EntryType.PUT) {
            out.bytes(value);
        }
    }

    /** Length of the common prefix of two keys. */
    public static int sharedPrefix(byte[] a, byte[] b) {
        int m = Arrays.mismatch(a, b); // at most the shorter length; -1 when equal
        return m < 0 ? a.length : m;
    }

    /** Appends one entry to a block being built. */
    public static void encodeEntry(ByteWriter out, byte[] key, long seq, byte type, byte[] value) {
        out.bytes(key);
        out.varint(seq);
        out.u8(type);
        if (type == EntryType.PUT) {
            out.bytes(value);
        }
    }

    /** Appends the version-2 offset array ({@code count} entry offsets, then the count). */
    public static void encodeOffsets(ByteWriter out, int[] offsets, int count) {
        for (int i = 0; i < count; i++) {
            out.u32(offsets[i]);
        }
        out.u32(count);
    }

    /**
     * Validated view of a payload's layout: where entries end and, for version 2, where the offset
     * array starts and how many entries there are.
     */
    private static final class Layout {
        final int entriesEnd;
        final int count; // -1 for version 1 (no offset array); version 5: restart points
        final boolean prefixed; // version 5: keys share prefixes, offsets are restart points

        Layout(byte[] payload, int version) throws IOException {
            prefixed = version >= SstFormat.VERSION_5;
            if (version < 2) {
                entriesEnd = payload.length;
                count = -1;
                return;
            }
            if (payload.length < COUNT_BYTES) {
                throw new IOException("block of " + payload.length + " bytes has no entry count");
            }
            int n = u32(payload, payload.length - COUNT_BYTES);
            long arrayBytes = (long) n * OFFSET_BYTES + COUNT_BYTES;
            if (n < 0 || arrayBytes > payload.length) {
                throw new IOException(
                        "bad entry count " + n + " for block of " + payload.length + " bytes");
            }
            entriesEnd = payload.length - (int) arrayBytes;
            count = n;
        }

        /** Start of entry {@code i}, checked to lie inside the entries region. */
        int offset(byte[] payload, int i) throws IOException {
            int off = u32(payload, entriesEnd + i * OFFSET_BYTES);
            if (off < 0 || off >= entriesEnd) {
                throw new IOException(
                        "entry offset "
                                + off
                                + " of entry "
                                + i
                                + " outside entries region [0, "
                                + entriesEnd
                                + ")");
            }
            return off;
        }
    }

    private static int u32(byte[] b, int at) {
        return ((b[at] & 0xFF) << 24)
                | ((b[at + 1] & 0xFF) << 16)
                | ((b[at + 2] & 0xFF) << 8)
                | (b[at + 3] & 0xFF);
    }

    /**
     * Compares the key stored at {@code keyAt} (a varint length prefix) with {@code target} without
     * copying it; returns the comparison and leaves the key end in {@code in}.
     */
    private static int compareKeyAt(ByteReader in, byte[] payload, int end, byte[] target)
            throws IOException {
        int len = in.varint32();
        return compareKeyBytes(in, payload, end, target, len);
    }

    /** As {@link #compareKeyAt} for a version-5 restart entry ({@code shared} must be 0). */
    private static int compareRestartKeyAt(ByteReader in, byte[] payload, int end, byte[] target)
            throws IOException {
        int shared = in.varint32();
        if (shared != 0) {
            throw new IOException("restart entry shares " + shared + " bytes with its predecessor");
        }
        return compareKeyBytes(in, payload, end, target, in.varint32());
    }

    private static int compareKeyBytes(
            ByteReader in, byte[] payload, int end, byte[] target, int len) throws IOException {
        int from = in.position();
        if (len > end - from) {
            throw new IOException("key of " + len + " bytes overruns block at " + from);
        }
        in.position(from + len);
        return Arrays.compareUnsigned(payload, from, from + len, target, 0, target.length);
    }

    /** Decodes seq, type and value following a key; the reader is positioned after the key. */
    private static Versioned decodeRest(ByteReader in) throws IOException {
        long seq = in.varint();
        byte type = entryType(in);
        return new Versioned(seq, type, type == EntryType.PUT ? in.bytes() : null);
    }

    private static void skipRest(ByteReader in) throws IOException {
        in.varint();
        if (entryType(in) == EntryType.PUT) {
            in.skipBytes();
        }
    }

    /**
     * Version 5: an entry's key suffix of {@code unshared} bytes at {@code from} ends in the block.
     */
    private static void checkSuffixFits(int unshared, int from, int entriesEnd) throws IOException {
        if (unshared > entriesEnd - from) {
            throw new IOException("key suffix of " + unshared + " bytes overruns block at " + from);
        }
    }

    /** Reads an entry's type byte; a value no version defines is a malformed entry. */
    private static byte entryType(ByteReader in) throws IOException {
        byte type = (byte) in.u8();
        if (!EntryType.isValid(type)) {
            throw new IOException("bad entry type " + type);
        }
        return type;
    }

    /**
     * Point lookup inside one block: the entry for exactly {@code key}, or null. Version 2 blocks
     * are binary-searched through the offset array (keys compared in place, only the matching entry
     * is decoded); version 1 blocks are scanned without copying keys.
     */
    public static Versioned get(
            byte[] payload, int version, byte[] key, String file, long blockOffset)
            throws IOException {
        int at = 0;
        try {
            Layout layout = new Layout(payload, version);
            ByteReader in = new ByteReader(payload, 0, layout.entriesEnd);
            if (layout.prefixed) {
                // the last restart point whose key <= target; its interval holds the key if any
                int lo = 0;
                int hi = layout.count - 1;
                int start = -1;
                while (lo <= hi) {
                    int mid = (lo + hi) >>> 1;
                    at = layout.offset(payload, mid);
                    in.position(at);
                    int c = compareRestartKeyAt(in, payload, layout.entriesEnd, key);
                    if (c == 0) {
                        return decodeRest(in);
                    }
                    if (c < 0) {
                        start = mid;
                        lo = mid + 1;
                    } else {
                        hi = mid - 1;
                    }
                }
                if (start < 0) {
                    return null;
                }
                at = layout.offset(payload, start);
                int limit =
                        start + 1 < layout.count
                                ? layout.offset(payload, start + 1)
                                : layout.entriesEnd;
                int restart = at;
                in.position(at);
                // matched = common prefix of the previous key (< target) and the target; the
                // restart entry has no previous key and shares nothing, so it starts at 0
                int matched = 0;
                while (in.position() < limit) {
                    at = in.position();
                    int shared = in.varint32();
                    int unshared = in.varint32();
                    int from = in.position();
                    if (at == restart && shared != 0) {
                        throw new IOException(
                                "restart entry shares " + shared + " bytes with its predecessor");
                    }
                    checkSuffixFits(unshared, from, layout.entriesEnd);
                    in.position(from + unshared);
                    if (shared < matched) {
                        return null; // differs from the previous key where that one matched
                    }
                    if (shared == matched) {
                        // one pass: where the suffix and the rest of the target first differ
                        int m =
                                Arrays.mismatch(
                                        payload, from, from + unshared, key, matched, key.length);
                        if (m < 0) {
                            return decodeRest(in); // equal
                        }
                        boolean below =
                                m == unshared // the entry's key is a proper prefix of the target
                                        || (m < key.length - matched
                                                && (payload[from + m] & 0xFF)
                                                        < (key[matched + m] & 0xFF));
                        if (!below) {
                            return null; // the first key above the target: it is absent
                        }
                        matched += m;
                    }
                    // shared > matched: the key equals the previous one up to past the point where
                    // that one was already smaller than the target, so it is smaller too
                    skipRest(in);
                }
                return null;
            }
            if (layout.count >= 0) {
                int lo = 0;
                int hi = layout.count - 1;
                while (lo <= hi) {
                    int mid = (lo + hi) >>> 1;
                    at = layout.offset(payload, mid);
                    in.position(at);
                    int c = compareKeyAt(in, payload, layout.entriesEnd, key);
                    if (c < 0) {
                        lo = mid + 1;
                    } else if (c > 0) {
                        hi = mid - 1;
                    } else {
                        return decodeRest(in);
                    }
                }
                return null;
            }
            while (in.hasRemaining()) {
                at = in.position();
                int c = compareKeyAt(in, payload, layout.entriesEnd, key);
                if (c == 0) {
                    return decodeRest(in);
                }
                if (c > 0) {
                    return null;
                }
                skipRest(in);
            }
            return null;
        } catch (IOException e) {
            throw malformed(file, blockOffset + at, e);
        }
    }

    /** The error for a malformed block: names the file and the offset in it. */
    private static IOException malformed(String file, long offset, IOException e) {
        return new IOException(
                "Malformed data block in " + file + " at offset " + offset + ": " + e.getMessage(),
                e);
    }

    /** A forward cursor over one block payload. */
    public static final class Cursor {
        private final byte[] payload;
        private final ByteReader in;
        private final Layout layout;
        private final String file;
        private final long blockOffset;
        private byte[] key;
        private long seq;
        private byte type;
        private byte[] value;
        private boolean valid;

        /**
         * Version 5: the last key decoded, in its first {@code scratchLength} bytes (the current
         * key while valid; length 0 right after a jump to a restart point). Keys passed over by a
         * seek are built here and compared in place, never copied.
         */
        private byte[] scratch = new byte[32];

        private int scratchLength;

        /** False only for a cursor made by {@link #seeking}, until its seek. */
        private boolean positioned;

        /** A cursor on the block's first entry. */
        public Cursor(byte[] payload, int version, String file, long blockOffset)
                throws IOException {
            this(payload, version, file, blockOffset, null);
        }

        /**
         * A cursor on the first entry whose key is not below {@code target} (not valid if there is
         * none); the entries before it are passed over without being decoded into objects.
         */
        public static Cursor seeking(
                byte[] payload, int version, String file, long blockOffset, byte[] target)
                throws IOException {
            return new Cursor(payload, version, file, blockOffset, target);
        }

        private Cursor(byte[] payload, int version, String file, long blockOffset, byte[] target)
                throws IOException {
            this.payload = payload;
            this.file = file;
            this.blockOffset = blockOffset;
            try {
                this.layout = new Layout(payload, version);
            } catch (IOException e) {
                throw malformed(0, e);
            }
            this.in = new ByteReader(payload, 0, layout.entriesEnd);
            if (target == null) {
                next();
            } else {
                seek(target);
            }
        }

        public boolean valid() {
            return valid;
        }

        public void next() throws IOException {
            positioned = true;
            if (!in.hasRemaining()) {
                valid = false;
                return;
            }
            int at = in.position();
            try {
                if (layout.prefixed) {
                    nextPrefixedKey();
                    key = Arrays.copyOf(scratch, scratchLength);
                } else {
                    key = in.bytes();
                }
                readRest();
            } catch (IOException e) {
                throw malformed(at, e);
            }
        }

        /** Reads the current entry's sequence number, type and value; the cursor is then valid. */
        private void readRest() throws IOException {
            seq = in.varint();
            type = entryType(in);
            value = type == EntryType.PUT ? in.bytes() : null;
            valid = true;
        }

        /** Version 5: builds the next key in {@link #scratch} from the previous one. */
        private void nextPrefixedKey() throws IOException {
            int shared = in.varint32();
            int unshared = in.varint32();
            if (shared > scratchLength) {
                throw new IOException(
                        "entry shares "
                                + shared
                                + " bytes of a "
                                + scratchLength
                                + "-byte previous key");
            }
            checkSuffixFits(unshared, in.position(), layout.entriesEnd);
            int length = shared + unshared;
            if (length > scratch.length) {
                scratch = Arrays.copyOf(scratch, Math.max(length, 2 * scratch.length));
            }
            in.readInto(scratch, shared, unshared);
            scratchLength = length;
        }

        /**
         * Version 5: moves to the first entry from the current position on whose key is not below
         * {@code target}, building the keys passed over in {@link #scratch} and skipping their
         * values; only the entry found is decoded.
         */
        private void scanPrefixedTo(byte[] target) throws IOException {
            while (in.hasRemaining()) {
                int at = in.position();
                try {
                    nextPrefixedKey();
                    if (Arrays.compareUnsigned(scratch, 0, scratchLength, target, 0, target.length)
                            >= 0) {
                        key = Arrays.copyOf(scratch, scratchLength);
                        readRest();
                        return;
                    }
                    skipRest(in);
                } catch (IOException e) {
                    throw malformed(at, e);
                }
            }
            valid = false;
        }

        /** Advances to the first entry with key >= target (from the current position). */
        public void seek(byte[] target) throws IOException {
            if (positioned && (!valid || Arrays.compareUnsigned(key, target) >= 0)) {
                return;
            }
            positioned = true;
            if (layout.count >= 0) {
                // the current key (if any) is below the target: the entry sought lies after it
                int lo = firstOffsetNotBelow(target);
                if (layout.prefixed) {
                    // the last restart point below the target, if ahead: keys restart there
                    int at = lo > 0 ? offsetAt(lo - 1) : -1;
                    if (at >= in.position()) {
                        in.position(at);
                        scratchLength = 0;
                    }
                    scanPrefixedTo(target);
                    return;
                }
                int at = lo < layout.count ? offsetAt(lo) : layout.entriesEnd;
                if (at >= in.position()) {
                    in.position(at);
                }
                next();
            } else if (key == null) {
                next(); // version 1, not yet on an entry
            }
            while (valid && Arrays.compareUnsigned(key, target) < 0) {
                next();
            }
        }

        /**
         * Binary search of the offset array (every entry, or in version 5 every restart point): the
         * first index whose key is not below {@code target}, or {@code count}.
         */
        private int firstOffsetNotBelow(byte[] target) throws IOException {
            int at = 0;
            int lo = 0;
            int hi = layout.count;
            try {
                ByteReader probe = new ByteReader(payload, 0, layout.entriesEnd);
                while (lo < hi) {
                    int mid = (lo + hi) >>> 1;
                    at = layout.offset(payload, mid);
                    probe.position(at);
                    int c =
                            layout.prefixed
                                    ? compareRestartKeyAt(probe, payload, layout.entriesEnd, target)
                                    : compareKeyAt(probe, payload, layout.entriesEnd, target);
                    if (c < 0) {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                return lo;
            } catch (IOException e) {
                throw malformed(at, e);
            }
        }

        /** Offset {@code i} of the (already validated) array. */
        private int offsetAt(int i) throws IOException {
            try {
                return layout.offset(payload, i);
            } catch (IOException e) {
                throw malformed(0, e);
            }
        }

        private IOException malformed(int at, IOException e) {
            return DataBlock.malformed(file, blockOffset + at, e);
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
