package io.github.flinkstate.changelog.format;

/**
 * Constants of the DSTL file and segment format, specified in {@code docs/format/dstl-segment.md}.
 *
 * <p>Thread safety: constants only.
 *
 * <p>These numbers are persisted in checkpoints and are frozen: never change a value, add a new
 * version or codec instead. All multi-byte integers are big-endian.
 *
 * <pre>
 * file    := file-header segment*
 * header  := magic:u32 ("DSTL") version:u8 reserved:u8[3]                 (8 bytes)
 * segment := magic:u32 ("SEGM") version:u8 codec:u8 flags:u16
 *            count:u32 raw-length:u32 stored-length:u32 crc32c:u32       (24 bytes)
 *            payload:u8[stored-length]
 * payload (after decompression, raw-length bytes) := change{count}
 * change  := key-group:i32 (-1 = metadata) length:u32 bytes:u8[length]
 * </pre>
 *
 * <p>The CRC32C covers the first 20 header bytes and the stored payload.
 */
public final class SegmentFormat {

    /** "DSTL": first four bytes of every file. */
    public static final int FILE_MAGIC = 0x4453544C;

    /** Current (and only) file format version. */
    public static final byte FILE_VERSION = 1;

    /** Size of the file header in bytes. */
    public static final int FILE_HEADER_SIZE = 8;

    /** "SEGM": first four bytes of every segment. */
    public static final int SEGMENT_MAGIC = 0x5345474D;

    /** Current (and only) segment format version. */
    public static final byte SEGMENT_VERSION = 1;

    /** Size of the segment header in bytes. */
    public static final int SEGMENT_HEADER_SIZE = 24;

    /** Number of leading header bytes covered by the checksum (all but the checksum itself). */
    public static final int CHECKSUMMED_HEADER_BYTES = 20;

    /** Codec id: payload stored as is. */
    public static final byte CODEC_NONE = 0;

    /** Codec id: payload compressed with raw DEFLATE (java.util.zip, no zlib wrapper). */
    public static final byte CODEC_DEFLATE = 1;

    /**
     * Flag bit: the segment's changes are in key-group order (metadata first, then by ascending key
     * group, append order within a group), so a reader may merge such segments by key group. Older
     * writers left all flags 0 (append order); older readers ignore flags.
     */
    public static final short FLAG_KEY_GROUP_ORDER = 0x0001;

    /** Key group recorded for metadata changes. */
    public static final int META_KEY_GROUP = -1;

    /** Upper bound for a single segment's raw or stored payload, to reject garbage lengths. */
    public static final int MAX_PAYLOAD_BYTES = Integer.MAX_VALUE - 64;

    private SegmentFormat() {}
}
