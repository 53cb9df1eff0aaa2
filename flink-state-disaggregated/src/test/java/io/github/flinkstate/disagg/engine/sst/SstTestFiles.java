package io.github.flinkstate.disagg.engine.sst;

import io.github.flinkstate.disagg.engine.key.EntryType;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import java.io.File;
import java.io.IOException;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

/**
 * Test data shared by the SST read tests: keys and values by index, and a file of consecutive
 * entries in small (about 1 KiB) blocks, so that a few thousand entries span many blocks.
 */
final class SstTestFiles {

    private SstTestFiles() {}

    /** Key {@code i}: key group 1, then {@code i} big-endian; keys sort by index. */
    static byte[] key(int i) {
        return new byte[] {0, 1, (byte) (i >>> 24), (byte) (i >>> 16), (byte) (i >>> 8), (byte) i};
    }

    /** 100 bytes that identify {@code i}. */
    static byte[] value(int i) {
        byte[] v = new byte[100];
        v[0] = (byte) i;
        v[99] = (byte) (i >>> 8);
        return v;
    }

    /** A file of {@code entries} entries (keys 0..entries-1) in blocks of about 1 KiB. */
    static Path write(
            FileSystem fs, File dir, String name, int entries, BlockCompression compression)
            throws IOException {
        Path path = new Path(new Path(dir.toURI()), name);
        SstWriter w =
                new SstWriter(fs, path, 1024, 10, KeyGroupSpan.of(0, 3), null, compression, null);
        for (int i = 0; i < entries; i++) {
            w.add(key(i), i + 1, EntryType.PUT, value(i));
        }
        w.finish(null);
        return path;
    }

    /**
     * Iterates {@code it} from the start, checking that entry n is key(n) / value(n); closes it.
     */
    static int readAll(SstIterator it) throws IOException {
        int n = 0;
        for (it.seekToFirst(); it.valid(); it.next()) {
            org.assertj.core.api.Assertions.assertThat(it.key()).isEqualTo(key(n));
            org.assertj.core.api.Assertions.assertThat(it.value()).isEqualTo(value(n));
            n++;
        }
        it.close();
        return n;
    }
}
