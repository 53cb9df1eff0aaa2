package io.github.flinkstate.disagg.engine.sst;

import java.io.IOException;
import java.util.Arrays;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Exception;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;

/**
 * Compression of SST data blocks (format version 4, docs/format/disagg-sst.md "Stored data block"):
 * a stored block is {@code u8 codec}, then the payload as is ({@link #NONE}) or {@code varint
 * payloadLength} and the LZ4 block-format compression of the payload ({@link #LZ4}).
 *
 * <p>LZ4 comes from lz4-java (a dependency of Flink's runtime, so on every Flink class path), in
 * its pure-Java form: no native library is extracted or loaded. A block that LZ4 does not shrink by
 * at least one eighth is stored uncompressed (codec 0), so incompressible data costs one byte per
 * block.
 *
 * <p>Thread safety: the enum and its codec instances are immutable and thread-safe.
 */
public enum BlockCompression {
    /** Blocks are stored as they are. */
    NONE,
    /** Blocks are compressed with LZ4 (block format) when that saves at least 1/8. */
    LZ4;

    /** Codec byte of a block stored as is. */
    static final byte CODEC_NONE = 0;

    /** Codec byte of a block compressed with LZ4. */
    static final byte CODEC_LZ4 = 1;

    /**
     * The largest payload stored compressed: a reader refuses to allocate more for one block, so a
     * larger payload (one entry over 64 MiB gets a block of its own) is stored uncompressed.
     */
    static final int MAX_COMPRESSED_PAYLOAD = 64 << 20;

    private static final LZ4Factory FACTORY = LZ4Factory.fastestJavaInstance();
    private static final LZ4Compressor COMPRESSOR = FACTORY.fastCompressor();
    private static final LZ4SafeDecompressor DECOMPRESSOR = FACTORY.safeDecompressor();

    /**
     * Writes the stored form of {@code payload[0..length)} into {@code out} (which is reset first).
     */
    void encode(byte[] payload, int length, ByteWriter out) {
        out.reset();
        if (this == LZ4 && length <= MAX_COMPRESSED_PAYLOAD) {
            int max = COMPRESSOR.maxCompressedLength(length);
            byte[] compressed = new byte[max];
            int n = COMPRESSOR.compress(payload, 0, length, compressed, 0, max);
            if (n + varintSize(length) + 1 <= length - length / 8) {
                out.u8(CODEC_LZ4);
                out.varint(length);
                out.raw(compressed, 0, n);
                return;
            }
        }
        out.u8(CODEC_NONE);
        out.raw(payload, 0, length);
    }

    /**
     * The payload of the stored data block {@code stored[0..storedLength)} whose checksum was
     * verified; failures name the file and the block's offset.
     */
    static byte[] decode(byte[] stored, int storedLength, String file, long blockOffset)
            throws IOException {
        return decode(stored, 0, storedLength, file, blockOffset);
    }

    /** As {@link #decode(byte[], int, String, long)} for a block at {@code stored[from..]}. */
    static byte[] decode(byte[] stored, int from, int storedLength, String file, long blockOffset)
            throws IOException {
        if (storedLength < 1) {
            throw malformed(file, blockOffset, "empty stored data block", null);
        }
        byte codec = stored[from];
        if (codec == CODEC_NONE) {
            return Arrays.copyOfRange(stored, from + 1, from + storedLength);
        }
        if (codec != CODEC_LZ4) {
            throw malformed(
                    file,
                    blockOffset,
                    "unknown block codec " + (codec & 0xFF) + " (this reader knows 0 and 1)",
                    null);
        }
        ByteReader in = new ByteReader(stored, from + 1, storedLength - 1);
        long length = in.varint();
        if (length < 0 || length > MAX_COMPRESSED_PAYLOAD) {
            throw malformed(file, blockOffset, "implausible payload length " + length, null);
        }
        byte[] payload = new byte[(int) length];
        int at = in.position();
        try {
            int n = DECOMPRESSOR.decompress(stored, at, from + storedLength - at, payload, 0);
            if (n != length) {
                throw malformed(
                        file,
                        blockOffset,
                        "LZ4 block decompressed to " + n + " bytes, expected " + length,
                        null);
            }
        } catch (LZ4Exception e) {
            throw malformed(file, blockOffset, "LZ4 block does not decompress", e);
        }
        return payload;
    }

    private static int varintSize(long v) {
        int n = 1;
        while ((v >>>= 7) != 0) {
            n++;
        }
        return n;
    }

    private static IOException malformed(String file, long offset, String what, Throwable cause) {
        return new IOException(
                "SST file " + file + " at offset " + offset + ": Malformed data block: " + what,
                cause);
    }
}
