package io.github.flinkstate.disagg.engine.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.testing.wait.Waits;
import java.io.EOFException;
import java.io.File;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The read-only mapping of whole-file copies: right bytes, no read of an unmapped buffer (that
 * would crash the JVM running this test), and the mapping released when dropped.
 */
class ReadOnlyMappingTest {

    @TempDir File tmp;

    private File fileOf(byte[] content) throws Exception {
        File f = new File(tmp, "copy-" + content.length + ".sst");
        Files.write(f.toPath(), content);
        return f;
    }

    private static ReadOnlyMapping map(File f, long length) throws Exception {
        try (FileChannel ch = FileChannel.open(f.toPath(), StandardOpenOption.READ)) {
            return ReadOnlyMapping.map(f, ch, length);
        }
    }

    private static byte[] random(int seed, int length) {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void read_returnsTheBytesOfAnyRange_andRefusesRangesOutsideTheMapping() throws Exception {
        byte[] content = random(1, 100_000);
        ReadOnlyMapping m = map(fileOf(content), content.length);
        assertThat(m.read(0, 10)).isEqualTo(Arrays.copyOf(content, 10));
        assertThat(m.read(54_321, 4_096))
                .isEqualTo(Arrays.copyOfRange(content, 54_321, 54_321 + 4_096));
        assertThat(m.read(content.length - 1, 1)).containsExactly(content[content.length - 1]);
        assertThatThrownBy(() -> m.read(content.length - 1, 2))
                .isInstanceOf(EOFException.class)
                .hasMessageContaining("100000 bytes mapped");
        assertThatThrownBy(() -> m.read(-1, 2)).isInstanceOf(EOFException.class);
        m.drop();
    }

    @Test
    void drop_unmapsAtOnceWhenNoReadRuns_andLaterReadsReturnNull() throws Exception {
        byte[] content = random(2, 10_000);
        int before = ReadOnlyMapping.liveMappings();
        ReadOnlyMapping m = map(fileOf(content), content.length);
        assertThat(m.isUnmapped()).isFalse();
        assertThat(ReadOnlyMapping.liveMappings()).isEqualTo(before + 1);
        m.drop();
        assertThat(m.isUnmapped()).isTrue();
        assertThat(ReadOnlyMapping.liveMappings())
                .as("counted against the process's limit until unmapped")
                .isEqualTo(before);
        assertThat(m.read(0, 10)).isNull();
        m.drop(); // idempotent
        assertThat(m.read(0, 10)).isNull();
    }

    @Test
    void theProcessLimit_isAQuarterOfTheKernelsLimit_atMost16384() throws Exception {
        java.nio.file.Path kernel = java.nio.file.Path.of("/proc/sys/vm/max_map_count");
        int expected = 16_384;
        if (Files.isReadable(kernel)) {
            try (java.io.BufferedReader r = Files.newBufferedReader(kernel)) {
                expected = Math.min(expected, Integer.parseInt(r.readLine().trim()) / 4);
            }
        } else {
            expected = 65_530 / 4;
        }
        // it read 1 once: Files.readString of a /proc file returned its first byte only
        assertThat(ReadOnlyMapping.PROCESS_LIMIT).isEqualTo(expected).isGreaterThan(1_000);
    }

    @Test
    void lengthsThatOneBufferCannotMap_areNotMapped() throws Exception {
        File f = fileOf(random(3, 10));
        assertThat(map(f, 0)).isNull();
        assertThat(map(f, ReadOnlyMapping.MAX_BYTES + 1)).isNull();
    }

    @Test
    void readsRacingADrop_returnTheRightBytesOrNull_andTheLastReadUnmaps() throws Exception {
        byte[] content = random(4, 1 << 20);
        for (int round = 0; round < 20; round++) {
            ReadOnlyMapping m = map(fileOf(content), content.length);
            int threads = 4;
            CountDownLatch started = new CountDownLatch(threads);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            AtomicLong served = new AtomicLong();
            List<Thread> readers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int seed = round * threads + t;
                Thread reader =
                        new Thread(
                                () -> {
                                    Random r = new Random(seed);
                                    started.countDown();
                                    try {
                                        while (true) {
                                            int length = 1 + r.nextInt(64 << 10);
                                            int at = r.nextInt(content.length - length);
                                            byte[] got = m.read(at, length);
                                            if (got == null) {
                                                return; // dropped: no read starts any more
                                            }
                                            if (!Arrays.equals(
                                                    got,
                                                    Arrays.copyOfRange(content, at, at + length))) {
                                                throw new AssertionError("wrong bytes at " + at);
                                            }
                                            served.incrementAndGet();
                                        }
                                    } catch (Throwable e) {
                                        failure.compareAndSet(null, e);
                                    }
                                });
                reader.start();
                readers.add(reader);
            }
            assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
            Waits.until(
                    "reads under way",
                    Duration.ofSeconds(10),
                    () -> served.get() >= threads || failure.get() != null);
            m.drop();
            for (Thread reader : readers) {
                reader.join(TimeUnit.SECONDS.toMillis(10));
                assertThat(reader.isAlive()).isFalse();
            }
            assertThat(failure.get()).isNull();
            assertThat(m.isUnmapped()).as("round %s, after %s reads", round, served).isTrue();
        }
    }
}
