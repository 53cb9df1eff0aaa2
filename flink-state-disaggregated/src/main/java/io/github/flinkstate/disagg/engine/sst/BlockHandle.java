package io.github.flinkstate.disagg.engine.sst;

/**
 * Location of a block payload in an SST file; the 4-byte CRC32C follows the payload.
 *
 * @param offset byte offset of the payload from the file start
 * @param length payload length in bytes, excluding the CRC
 */
public record BlockHandle(long offset, int length) {
    /** Offset just after the block and its CRC. */
    public long end() {
        return offset + length + SstFormat.BLOCK_CRC_BYTES;
    }
}
