package io.github.flinkstate.changelog.format;

import java.io.IOException;

/**
 * Thrown when a DSTL file or segment cannot be read back: bad magic, unknown version or codec,
 * checksum mismatch, truncation or undecodable payload. The message always names the file and the
 * byte offset of the segment so that an operator can find the damaged data.
 */
public class CorruptSegmentException extends IOException {

    private static final long serialVersionUID = 1L;

    private final String file;
    private final long offset;

    public CorruptSegmentException(String file, long offset, String problem) {
        this(file, offset, problem, null);
    }

    public CorruptSegmentException(String file, long offset, String problem, Throwable cause) {
        super(
                String.format(
                        "Corrupt DSTL data in file '%s' at offset %d: %s", file, offset, problem),
                cause);
        this.file = file;
        this.offset = offset;
    }

    public String getFile() {
        return file;
    }

    public long getOffset() {
        return offset;
    }
}
