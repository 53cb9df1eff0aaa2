package io.github.flinkstate.disagg.engine.sst;

import static io.github.flinkstate.disagg.engine.sst.SstTestFiles.key;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.disagg.engine.key.EntryType;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import java.io.File;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How an SST file reaches the primary file system: in writes of {@link
 * SstWriter#WRITE_BUFFER_BYTES} rather than two calls per data block (payload, then checksum). A
 * DFS client pays per call (a lock, checksums, on the simulated DFS a wait for the link), so a file
 * of small blocks written call by call is slower to upload than its size says. Counts calls through
 * the test kit's {@link InjectingFileSystem}; no assertion on time.
 */
class SstWriteCallsTest {

    @TempDir File tmp;

    @Test
    void aFileOfManySmallBlocks_reachesTheFileSystemInFewLargeWrites() throws Exception {
        InjectingFileSystem fs = new InjectingFileSystem(FileSystem.getLocalFileSystem());
        for (BlockCompression compression : BlockCompression.values()) {
            fs.counters().reset();
            int entries = 5000; // blocks of about 1 KiB: about 500 data blocks
            Path p = SstTestFiles.write(fs, tmp, "w-" + compression + ".sst", entries, compression);
            long size = fs.getFileStatus(p).getLen();
            long calls = fs.counters().calls(FsOp.WRITE);
            assertThat(fs.counters().bytes(FsOp.WRITE)).isEqualTo(size);
            assertThat(calls)
                    .as("%s: write calls for %d bytes", compression, size)
                    .isLessThanOrEqualTo(size / SstWriter.WRITE_BUFFER_BYTES + 2);

            SstReader r = SstReader.open(fs, p, new BlockCache(64 << 20), size);
            assertThat(r.blockCount()).isGreaterThan(100);
            assertThat(SstTestFiles.readAll(r.iterator())).isEqualTo(entries);
            r.close();
        }
    }

    @Test
    void blocksLargerThanTheBuffer_goStraightThroughInOrder() throws Exception {
        InjectingFileSystem fs = new InjectingFileSystem(FileSystem.getLocalFileSystem());
        Path p = new Path(new Path(tmp.toURI()), "large.sst");
        SstWriter w = new SstWriter(fs, p, 1024, 10, KeyGroupSpan.of(0, 3));
        int entries = 40; // values of 10 B to 200 KiB: blocks below, at and above 64 KiB
        for (int i = 0; i < entries; i++) {
            w.add(key(i), i + 1, EntryType.PUT, bigValue(i));
        }
        w.finish(null);
        long size = fs.getFileStatus(p).getLen();
        assertThat(fs.counters().bytes(FsOp.WRITE)).isEqualTo(size);

        SstReader r = SstReader.open(fs, p, new BlockCache(64 << 20), size);
        for (int i = 0; i < entries; i++) {
            assertThat(r.get(key(i)).value()).isEqualTo(bigValue(i));
        }
        r.close();
    }

    /** {@code i * 5 KiB + 10} bytes that identify {@code i} and their position. */
    private static byte[] bigValue(int i) {
        byte[] v = new byte[i * 5 * 1024 + 10];
        for (int j = 0; j < v.length; j++) {
            v[j] = (byte) (i * 31 + j);
        }
        return v;
    }
}
