package io.github.flinkstate.disagg.engine.sst;

import static io.github.flinkstate.disagg.engine.sst.SstTestFiles.key;
import static io.github.flinkstate.disagg.engine.sst.SstTestFiles.value;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.disagg.engine.cache.BlockCache;
import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.local.LocalFileSystem;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A reader on Flink's local file system itself (point reads through a file channel, not a Flink
 * stream; the fault tests run behind the test kit's file system, which keeps Flink streams) names a
 * missing and a truncated file as such.
 */
class SstReaderLocalFileTest {

    private static final int ENTRIES = 2_000;

    @TempDir File tmp;

    private final FileSystem fs = LocalFileSystem.getSharedInstance();

    @Test
    void aMissingFile_isNamedMissing() throws IOException {
        Path p = SstTestFiles.write(fs, tmp, "gone.sst", ENTRIES, BlockCompression.NONE);
        long size = fs.getFileStatus(p).getLen();
        assertThat(new File(p.toUri()).delete()).isTrue();
        assertThatThrownBy(() -> SstReader.open(fs, p, new BlockCache(0), size))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("Missing SST file")
                .hasMessageContaining("gone.sst");
    }

    @Test
    void aFileTruncatedUnderAnOpenReader_isNamedTruncated() throws Exception {
        Path p = SstTestFiles.write(fs, tmp, "short.sst", ENTRIES, BlockCompression.NONE);
        long size = fs.getFileStatus(p).getLen();
        SstReader r = SstReader.open(fs, p, new BlockCache(0), size);
        try {
            assertThat(r.get(key(ENTRIES - 1)).value()).isEqualTo(value(ENTRIES - 1));
            try (RandomAccessFile raf = new RandomAccessFile(new File(p.toUri()), "rw")) {
                raf.setLength(size / 4); // the metadata stays in memory, the late blocks go
            }
            assertThatThrownBy(() -> r.get(key(ENTRIES - 1)))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("Truncated SST file")
                    .hasMessageContaining("short.sst");
            assertThat(r.get(key(0)).value()).as("blocks before the cut").isEqualTo(value(0));
        } finally {
            r.close();
        }
    }
}
