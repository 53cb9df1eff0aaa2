package io.github.flinkstate.disagg.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.disagg.engine.cache.BlockMemory;
import io.github.flinkstate.disagg.engine.iterator.LsmIterator;
import io.github.flinkstate.disagg.engine.key.Bytes;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.testutil.LsmModelRunner;
import java.io.File;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Readers run against one writer while background flushes and compactions install new versions and
 * delete obsolete files: every read must see each key at least at its last published write, and
 * scans must stay sorted and well-formed. No timing is asserted.
 */
class LsmStoreConcurrencyTest {

    private static final int KEYS = 3000;
    private static final int WRITES = 60_000;

    @TempDir File tmp;

    private static byte[] key(int id) {
        return LsmModelRunner.key(id % 16, 0, id);
    }

    @Test
    void readersSeeMonotonicValues_whileFlushingAndCompacting() throws Exception {
        readersSeeMonotonicValues(new BlockCache(128 * 1024));
    }

    /**
     * The same with a row cache, whose lookups race the flushes that make rows stale: a lookup that
     * read a key's old value from the files before a flush brought the new one must not store it.
     */
    @Test
    void readersSeeMonotonicValues_withARowCache() throws Exception {
        readersSeeMonotonicValues(new BlockCache(new BlockMemory(1 << 20, 0.5), null));
    }

    private void readersSeeMonotonicValues(BlockCache cache) throws Exception {
        LsmOptions o =
                new LsmOptions(
                                FileSystem.getLocalFileSystem(),
                                new Path(tmp.toURI()),
                                KeyGroupSpan.of(0, 15))
                        .memtableBytes(16 * 1024)
                        .blockSize(512)
                        .targetFileBytes(16 * 1024)
                        .levelBaseBytes(64 * 1024)
                        .l0CompactionTrigger(2)
                        .maxOpenFiles(16)
                        .blockCache(cache);
        AtomicInteger published = new AtomicInteger(-1);
        AtomicBoolean done = new AtomicBoolean();
        Queue<Throwable> errors = new ConcurrentLinkedQueue<>();
        try (LsmStore store = LsmStore.open(o)) {
            Thread writer =
                    new Thread(
                            () -> {
                                try {
                                    for (int i = 0; i < WRITES; i++) {
                                        store.put(
                                                key(i % KEYS),
                                                ByteBuffer.allocate(4).putInt(i).array());
                                        published.set(i);
                                    }
                                } catch (Throwable t) {
                                    errors.add(t);
                                } finally {
                                    done.set(true);
                                }
                            });
            List<Thread> readers = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                long seed = 77 + r;
                boolean scanner = r == 1;
                readers.add(
                        new Thread(
                                () -> {
                                    Random rnd = new Random(seed);
                                    try {
                                        while (!done.get()) {
                                            int p = published.get();
                                            if (p < 0) {
                                                continue;
                                            }
                                            if (scanner) {
                                                checkScan(store, rnd.nextInt(16), p);
                                            } else {
                                                int j = rnd.nextInt(p + 1);
                                                int id = j % KEYS;
                                                int lastWrite = p - ((p - id) % KEYS);
                                                byte[] v = store.get(key(id));
                                                if (v == null
                                                        || ByteBuffer.wrap(v).getInt() < lastWrite
                                                        || ByteBuffer.wrap(v).getInt() % KEYS
                                                                != id) {
                                                    throw new AssertionError(
                                                            "key "
                                                                    + id
                                                                    + " read "
                                                                    + (v == null
                                                                            ? "null"
                                                                            : ByteBuffer.wrap(v)
                                                                                    .getInt())
                                                                    + " but write "
                                                                    + lastWrite
                                                                    + " was published");
                                                }
                                            }
                                        }
                                    } catch (Throwable t) {
                                        errors.add(t);
                                    }
                                }));
            }
            readers.forEach(Thread::start);
            writer.start();
            writer.join();
            for (Thread t : readers) {
                t.join();
            }
            assertThat(errors).isEmpty();
            store.checkInvariants();
            store.flush();
            store.compactUntilIdle();
            store.checkInvariants();
            for (int id = 0; id < KEYS; id++) {
                int last = WRITES - 1 - ((WRITES - 1 - id) % KEYS);
                assertThat(ByteBuffer.wrap(store.get(key(id))).getInt()).isEqualTo(last);
            }
            assertThat(store.stats().flushes()).isGreaterThan(5);
            if (store.rowCache() != null) {
                assertThat(store.rowCache().hitCount()).isPositive();
            }
        }
    }

    private static void checkScan(LsmStore store, int kg, int published) throws Exception {
        byte[] prev = null;
        int count = 0;
        try (LsmIterator it = store.scanKeyGroups(KeyGroupSpan.of(kg, kg))) {
            while (it.isValid()) {
                if (prev != null && Bytes.compare(prev, it.key()) >= 0) {
                    throw new AssertionError("scan out of order at " + Bytes.hex(it.key()));
                }
                int v = ByteBuffer.wrap(it.value()).getInt();
                if (key(v % KEYS)[1] != kg || !java.util.Arrays.equals(key(v % KEYS), it.key())) {
                    throw new AssertionError(
                            "value " + v + " under wrong key " + Bytes.hex(it.key()));
                }
                prev = it.key();
                count++;
                it.next();
            }
        }
        int expectedAtLeast = 0;
        for (int id = kg; id < KEYS && id <= published; id += 16) {
            expectedAtLeast++;
        }
        if (count < expectedAtLeast) {
            throw new AssertionError(
                    "scan of key group " + kg + " saw " + count + " < " + expectedAtLeast);
        }
    }
}
