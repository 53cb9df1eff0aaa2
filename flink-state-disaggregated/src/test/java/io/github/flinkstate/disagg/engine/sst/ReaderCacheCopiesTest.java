package io.github.flinkstate.disagg.engine.sst;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.cache.BlockCache;
import java.io.File;
import java.nio.file.Files;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Reads of a file the store replaced by an identical copy go to the copy (the original may be
 * deleted by Flink while an older version still lists it), and back to the original when the copy
 * is gone (the checkpoint that named the copy was discarded) or forgotten.
 */
class ReaderCacheCopiesTest {

    @TempDir File tmp;

    private final FileSystem fs = FileSystem.getLocalFileSystem();

    @Test
    void readsGoToTheCopy_andBackToTheOriginalWhenTheCopyIsGone() throws Exception {
        Path original = SstTestFiles.write(fs, tmp, "original.sst", 500, BlockCompression.NONE);
        long size = fs.getFileStatus(original).getLen();
        File copy = new File(tmp, "copy.sst");
        Files.copy(new File(original.toUri()).toPath(), copy.toPath());
        ReaderCache readers = new ReaderCache(fs, new BlockCache(0), 8, 2);
        try {
            readers.readThroughCopy(original.toString(), new Path(copy.toURI()).toString());
            assertThat(new File(original.toUri()).delete()).isTrue(); // Flink deleted it
            SstReader r = readers.get(original.toString(), size);
            assertThat(r.get(SstTestFiles.key(7)).value()).isEqualTo(SstTestFiles.value(7));

            // a copy that is gone: the original (here written again) is read
            readers.clear();
            assertThat(copy.delete()).isTrue();
            SstTestFiles.write(fs, tmp, "original.sst", 500, BlockCompression.NONE);
            r = readers.get(original.toString(), size);
            assertThat(r.get(SstTestFiles.key(9)).value()).isEqualTo(SstTestFiles.value(9));
        } finally {
            readers.close();
        }
    }

    /**
     * A copy replaced by a copy of its own (a second full checkpoint): reads follow to the last.
     */
    @Test
    void aCopyOfACopy_isFollowed() throws Exception {
        Path original = SstTestFiles.write(fs, tmp, "original.sst", 500, BlockCompression.NONE);
        long size = fs.getFileStatus(original).getLen();
        File first = new File(tmp, "first.sst");
        File second = new File(tmp, "second.sst");
        Files.copy(new File(original.toUri()).toPath(), second.toPath());
        ReaderCache readers = new ReaderCache(fs, new BlockCache(0), 8, 2);
        try {
            readers.readThroughCopy(original.toString(), new Path(first.toURI()).toString());
            readers.readThroughCopy(
                    new Path(first.toURI()).toString(), new Path(second.toURI()).toString());
            assertThat(new File(original.toUri()).delete()).isTrue(); // and "first" never existed
            SstReader r = readers.get(original.toString(), size);
            assertThat(r.get(SstTestFiles.key(7)).value()).isEqualTo(SstTestFiles.value(7));
        } finally {
            readers.close();
        }
    }

    /**
     * Once no version lists the original, or the copy (compacted away: the store may delete it, or
     * a discarded checkpoint hand it back for deletion, while a reader of it is still cached; from
     * a review), reads of the original no longer go to the copy.
     */
    @ParameterizedTest(name = "forgotten: {0}")
    @ValueSource(strings = {"original", "copy"})
    void aForgottenOriginalOrCopy_endsTheRedirect(String forgotten) throws Exception {
        Path original = SstTestFiles.write(fs, tmp, "original.sst", 500, BlockCompression.NONE);
        long size = fs.getFileStatus(original).getLen();
        ReaderCache readers = new ReaderCache(fs, new BlockCache(0), 8, 2);
        try {
            Path other = SstTestFiles.write(fs, tmp, "other.sst", 10, BlockCompression.NONE);
            readers.readThroughCopy(original.toString(), other.toString());
            readers.forgetCopy((forgotten.equals("original") ? original : other).toString());
            SstReader r = readers.get(original.toString(), size);
            assertThat(r.get(SstTestFiles.key(300)).value()).isEqualTo(SstTestFiles.value(300));
        } finally {
            readers.close();
        }
    }
}
