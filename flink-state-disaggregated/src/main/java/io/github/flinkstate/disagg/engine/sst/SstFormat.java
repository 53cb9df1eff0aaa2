package io.github.flinkstate.disagg.engine.sst;

import java.util.zip.CRC32C;

/**
 * Frozen constants of the SST file format; the specification is docs/format/disagg-sst.md.
 *
 * <p>Every persisted number here is part of the on-disk format: never change a value, add a new
 * {@link #VERSION} instead.
 */
public final class SstFormat {

    /** Last 8 bytes of every SST file: ASCII "DISAGSST". */
    public static final long MAGIC = 0x4449534147535354L;

    /**
     * Format version written by this code: keys in data blocks are prefix-compressed against the
     * previous key, with a restart point every {@link DataBlock#RESTART_INTERVAL} entries, and the
     * offset array lists the restart points only; the index holds separators; the bloom filter is
     * blocked; otherwise as version 4.
     */
    public static final byte VERSION = 5;

    /**
     * First version with prefix-compressed keys and restart points in data blocks, separators in
     * the index and a blocked bloom filter (one cache line per key, see BloomFilter).
     */
    public static final byte VERSION_5 = 5;

    /**
     * Every data block is stored with a codec byte, and optionally compressed ({@link
     * BlockCompression}); otherwise as version 3. Still readable.
     */
    public static final byte VERSION_4 = 4;

    /**
     * The footer ends with a flags byte ({@link #FLAG_BLOOM_PREFIXES}); data blocks as in version
     * 2. Still readable.
     */
    public static final byte VERSION_3 = 3;

    /** Data blocks end with an entry offset array; no footer flags. Still readable. */
    public static final byte VERSION_2 = 2;

    /** Oldest format version still readable (data blocks without offset array). */
    public static final byte VERSION_1 = 1;

    /**
     * Footer flag (version 3 and later): the bloom filter also holds the key prefixes the store's
     * bloom prefix function returned, so a scan of such a prefix may skip the file when the filter
     * says no.
     */
    public static final int FLAG_BLOOM_PREFIXES = 1;

    /** Trailer: u32 footer length, u32 footer CRC32C, u8 version, u64 magic. */
    public static final int TRAILER_BYTES = 4 + 4 + 1 + 8;

    /** Each block is followed by a u32 CRC32C of its payload. */
    public static final int BLOCK_CRC_BYTES = 4;

    private SstFormat() {}

    /** CRC32C of a byte range, as an unsigned 32-bit value stored in an int. */
    public static int crc32c(byte[] b, int off, int len) {
        CRC32C c = new CRC32C();
        c.update(b, off, len);
        return (int) c.getValue();
    }
}
