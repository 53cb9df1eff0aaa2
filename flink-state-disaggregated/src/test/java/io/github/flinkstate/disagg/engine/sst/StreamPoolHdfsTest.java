package io.github.flinkstate.disagg.engine.sst;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.testing.hdfs.MiniDfsExtension;
import java.io.EOFException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.flink.core.fs.ByteBufferReadable;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The point-read pool on a real HDFS ({@code MiniDFSCluster}) through Flink's Hadoop stream, whose
 * positional read fills a heap buffer from its array offset and does not move the buffer's
 * position: reads at any file position into any part of the caller's array return the right bytes,
 * are positional reads (HDFS's pread) on at most the pool's streams, and a read past the end is an
 * {@link EOFException}.
 */
@Timeout(120)
class StreamPoolHdfsTest {

    @RegisterExtension static final MiniDfsExtension HDFS = new MiniDfsExtension();

    @Test
    void positionalReadsOnHdfs_landWhereAsked() throws Exception {
        FileSystem fs = HDFS.fileSystem();
        Path p = new Path(HDFS.path("/pool"), "data.bin");
        byte[] data = new byte[300_000];
        new Random(7).nextBytes(data);
        try (FSDataOutputStream out = fs.create(p, FileSystem.WriteMode.NO_OVERWRITE)) {
            out.write(data);
        }
        try (var probe = fs.open(p)) {
            assertThat(probe).as("Flink's HDFS stream").isInstanceOf(ByteBufferReadable.class);
        }
        StreamPool pool = new StreamPool(fs, p, 4, true);
        ExecutorService threads = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> reads = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int seed = t;
                reads.add(
                        threads.submit(
                                () -> {
                                    Random r = new Random(seed);
                                    for (int i = 0; i < 50; i++) {
                                        int len = 1 + r.nextInt(8000);
                                        int pos = r.nextInt(data.length - len);
                                        int off = r.nextInt(100);
                                        byte[] buf = new byte[off + len + 7];
                                        pool.readFully(pos, buf, off, len);
                                        assertThat(Arrays.copyOfRange(buf, off, off + len))
                                                .isEqualTo(
                                                        Arrays.copyOfRange(data, pos, pos + len));
                                        assertThat(Arrays.copyOfRange(buf, 0, off))
                                                .as("nothing written before the offset")
                                                .isEqualTo(new byte[off]);
                                    }
                                    return null;
                                }));
            }
            for (Future<?> f : reads) {
                f.get();
            }
            assertThat(pool.positionalReads()).as("HDFS preads").isEqualTo(200);
            assertThat(pool.openStreams()).isBetween(1, 4);
            assertThatThrownBy(() -> pool.readFully(data.length - 10, new byte[20], 0, 20))
                    .isInstanceOf(EOFException.class);
            byte[] tail = new byte[10];
            pool.readFully(data.length - 10, tail, 0, 10);
            assertThat(tail).isEqualTo(Arrays.copyOfRange(data, data.length - 10, data.length));
        } finally {
            threads.shutdownNow();
            pool.close();
        }
        assertThat(pool.openStreams()).isZero();
    }
}
