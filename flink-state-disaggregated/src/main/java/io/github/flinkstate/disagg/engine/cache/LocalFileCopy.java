package io.github.flinkstate.disagg.engine.cache;

import java.io.File;
import java.io.IOException;

/**
 * A whole local copy of one SST file the store wrote (write-through): any range of the file can be
 * read from it at its original offset. Entered into the {@link DiskCache} only once the copy is
 * complete and its length equals the file's.
 *
 * <p>Thread safety: as {@link DiskUnit}.
 */
final class LocalFileCopy extends DiskUnit {

    final String sourceFile;

    /**
     * The file's last bytes as they were written into the copy ({@link WriteThrough#END_BYTES} or
     * fewer): the SST format checksums its blocks and footer, but not the trailer's version byte,
     * which decides how the rest is decoded, so reads that reach the end compare these.
     */
    final byte[] end;

    LocalFileCopy(File file, String sourceFile, long length, byte[] end) throws IOException {
        super(file);
        this.sourceFile = sourceFile;
        this.bytes = length;
        this.end = end;
        open(false);
    }

    /**
     * Whether {@code data}, read at {@code position}, agrees with {@link #end} where it overlaps
     * the file's last bytes.
     */
    boolean endMatches(long position, byte[] data) {
        long endStart = bytes - end.length;
        for (long at = Math.max(position, endStart); at < position + data.length; at++) {
            if (data[(int) (at - position)] != end[(int) (at - endStart)]) {
                return false;
            }
        }
        return true;
    }
}
