package io.github.flinkstate.disagg.engine.sst;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import java.io.File;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An open that fails after the file's metadata was read (here: the block cache refuses the file
 * because it knows the same name with another block count, the sign of a file that changed under
 * its name) leaves no stream of the file open.
 */
class SstReaderOpenFailureTest {

    @TempDir File tmp;

    private final InjectingFileSystem fs = new InjectingFileSystem(FileSystem.getLocalFileSystem());

    @Test
    void anOpenRefusedByTheBlockCache_closesTheStreamItOpened() throws Exception {
        Path file = SstTestFiles.write(fs, tmp, "a.sst", 500, BlockCompression.NONE);
        long size = fs.getFileStatus(file).getLen();
        BlockCache cache = new BlockCache(1 << 20);
        cache.open(file.toString(), 1); // the same name, known with another block count

        assertThatThrownBy(() -> SstReader.open(fs, file, cache, size))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("files must be immutable");
        assertThat(fs.openInputStreams()).as("streams left open by the failed open").isZero();
    }
}
