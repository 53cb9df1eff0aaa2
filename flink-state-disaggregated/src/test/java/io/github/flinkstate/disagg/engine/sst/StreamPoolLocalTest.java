package io.github.flinkstate.disagg.engine.sst;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.EOFException;
import java.io.File;
import java.io.FileNotFoundException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.Random;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystemSafetyNet;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.local.LocalFileSystem;
import org.apache.flink.util.WrappingProxy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The point-read pool on the local file system reads with a file channel's positional read, also
 * behind Flink's task safety net: reads at any position (longer than one piece too) land where
 * asked, a read past the end is an {@link EOFException}, a missing file a {@link
 * FileNotFoundException}; an interrupted read closes its channel for good, which is why the pool
 * drops the source of any failed read and opens a fresh one for the next; the sequential pools keep
 * Flink's stream (seek + read).
 */
@Timeout(60)
class StreamPoolLocalTest {

    @TempDir File tmp;

    private byte[] writeData(File f) throws Exception {
        byte[] data = new byte[3 * LocalChannelReadSource.PIECE + 1234];
        new Random(11).nextBytes(data);
        Files.write(f.toPath(), data);
        return data;
    }

    @Test
    void pointReadsOnTheLocalFileSystem_arePositionalAndLandWhereAsked() throws Exception {
        File f = new File(tmp, "data.bin");
        byte[] data = writeData(f);
        StreamPool pool =
                new StreamPool(LocalFileSystem.getSharedInstance(), new Path(f.toURI()), 2, true);
        try {
            Random r = new Random(3);
            for (int i = 0; i < 100; i++) {
                int len = 1 + r.nextInt(i % 10 == 0 ? data.length - 1 : 9000);
                int pos = r.nextInt(data.length - len + 1);
                int off = r.nextInt(50);
                byte[] buf = new byte[off + len + 3];
                pool.readFully(pos, buf, off, len);
                assertThat(Arrays.copyOfRange(buf, off, off + len))
                        .isEqualTo(Arrays.copyOfRange(data, pos, pos + len));
                assertThat(Arrays.copyOfRange(buf, 0, off)).isEqualTo(new byte[off]);
            }
            assertThat(pool.positionalReads()).as("channel preads").isEqualTo(100);
            assertThat(pool.openStreams()).isEqualTo(1);
            assertThatThrownBy(() -> pool.readFully(data.length - 10, new byte[20], 0, 20))
                    .isInstanceOf(EOFException.class);
        } finally {
            pool.close();
        }
        assertThat(pool.openStreams()).isZero();
    }

    @Test
    void behindTheTaskSafetyNet_theLocalFileIsStillReadPositionally() throws Exception {
        File f = new File(tmp, "net.bin");
        byte[] data = writeData(f);
        FileSystemSafetyNet.initializeSafetyNetForThread();
        try {
            Path p = new Path(f.toURI());
            FileSystem fs = p.getFileSystem();
            assertThat(fs).as("the task thread's wrapper").isInstanceOf(WrappingProxy.class);
            StreamPool pool = new StreamPool(fs, p, 2, true);
            byte[] buf = new byte[100];
            pool.readFully(5000, buf, 0, 100);
            assertThat(buf).isEqualTo(Arrays.copyOfRange(data, 5000, 5100));
            assertThat(pool.positionalReads()).isEqualTo(1);
            pool.close();
        } finally {
            FileSystemSafetyNet.closeSafetyNetAndGuardedResourcesForThread();
        }
    }

    @Test
    void sequentialPools_keepTheStreamsSeekAndRead() throws Exception {
        File f = new File(tmp, "seq.bin");
        byte[] data = writeData(f);
        StreamPool pool =
                new StreamPool(LocalFileSystem.getSharedInstance(), new Path(f.toURI()), 1, false);
        byte[] buf = new byte[LocalChannelReadSource.PIECE + 5];
        pool.readFully(7, buf, 0, buf.length);
        assertThat(buf).isEqualTo(Arrays.copyOfRange(data, 7, 7 + buf.length));
        assertThat(pool.positionalReads()).isZero();
        pool.close();
    }

    @Test
    void aMissingFile_isFileNotFound() {
        StreamPool pool =
                new StreamPool(
                        LocalFileSystem.getSharedInstance(),
                        new Path(new File(tmp, "gone.bin").toURI()),
                        2,
                        true);
        assertThatThrownBy(() -> pool.readFully(0, new byte[8], 0, 8))
                .isInstanceOf(FileNotFoundException.class)
                .hasMessageContaining("gone.bin");
        assertThat(pool.openStreams()).isZero();
    }

    @Test
    void anInterruptedRead_closesItsChannel_soThePoolDropsItsSourceOnFailure() throws Exception {
        File f = new File(tmp, "intr.bin");
        byte[] data = writeData(f);
        LocalChannelReadSource source = LocalChannelReadSource.open(f);
        byte[] buf = new byte[64];
        Thread.currentThread().interrupt();
        try {
            assertThatThrownBy(() -> source.readFully(100, buf, 0, 64))
                    .isInstanceOf(ClosedByInterruptException.class);
        } finally {
            Thread.interrupted();
        }
        assertThatThrownBy(() -> source.readFully(100, buf, 0, 64))
                .as("the channel stays closed")
                .isInstanceOf(ClosedChannelException.class);
        source.close();

        StreamPool pool =
                new StreamPool(LocalFileSystem.getSharedInstance(), new Path(f.toURI()), 2, true);
        pool.readFully(0, buf, 0, 64);
        assertThat(pool.openStreams()).isEqualTo(1);
        assertThatThrownBy(() -> pool.readFully(data.length - 1, buf, 0, 64))
                .isInstanceOf(EOFException.class);
        assertThat(pool.openStreams()).as("a failed read drops its source").isZero();
        pool.readFully(200, buf, 0, 64);
        assertThat(buf).isEqualTo(Arrays.copyOfRange(data, 200, 264));
        pool.close();
    }
}
