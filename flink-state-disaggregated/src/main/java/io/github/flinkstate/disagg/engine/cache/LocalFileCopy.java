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

    LocalFileCopy(File file, String sourceFile, long length) throws IOException {
        super(file);
        this.sourceFile = sourceFile;
        this.bytes = length;
        open(false);
    }
}
