package io.github.flinkstate.disagg.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.testutil.LsmModelRunner;
import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.Hang;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A compaction that ends after the store closed (on a slow DFS it can outlast the bounded wait of
 * {@link LsmStore#close()}) must change nothing: its inputs may belong to a completed checkpoint
 * that the restarted task restores from, and after the close the backend no longer tracks which
 * files it handed to Flink. Found in a review: the compaction installed its result anyway, and the
 * deletion policy deleted its inputs. Its outputs, which nothing references, are deleted.
 */
@Timeout(60)
class CloseDuringCompactionTest {

    private static final KeyGroupSpan SPAN = KeyGroupSpan.of(0, 3);

    @TempDir File tmp;

    private final InjectingFileSystem fs = new InjectingFileSystem(FileSystem.getLocalFileSystem());

    private Set<String> files(File dir) {
        Set<String> names = new TreeSet<>();
        for (String name : dir.list()) {
            if (name.endsWith(".sst")) {
                names.add(name);
            }
        }
        return names;
    }

    /** A store in {@code dir} with two overlapping files in level 0. */
    private LsmStore storeWithTwoFiles(File dir) throws IOException {
        LsmStore store =
                LsmStore.open(
                        new LsmOptions(fs, new Path(dir.toURI()), SPAN)
                                .blockSize(256)
                                .backgroundCompaction(false)
                                .blockCache(new BlockCache(1 << 20)));
        for (int file = 0; file < 2; file++) {
            for (int i = 0; i < 200; i++) {
                store.put(LsmModelRunner.key(i % 4, 0, i), ("v" + file + "-" + i).getBytes());
            }
            store.flush();
        }
        return store;
    }

    /**
     * Compacts {@code store} on a thread of its own and closes the store while {@code op} hangs on
     * the files of {@code dir} matching {@code fileRegex}; the hang ends after the close. Returns
     * what the compaction threw once it ended.
     */
    private Throwable compactionAcrossClose(
            LsmStore store, File dir, FsOp op, String fileRegex, String hangingAt)
            throws Exception {
        AtomicReference<Throwable> compactionError = new AtomicReference<>();
        Thread compaction;
        try (Hang hang = fs.hang(op, Pattern.quote(InjectingFileSystem.key(dir)) + fileRegex)) {
            compaction =
                    new Thread(
                            () -> {
                                try {
                                    store.compactAll();
                                } catch (Throwable t) {
                                    compactionError.set(t);
                                }
                            },
                            "compaction");
            compaction.start();
            Waits.until(hangingAt, Duration.ofSeconds(30), () -> hang.blockedCalls() > 0);
            store.close(); // the task is disposed while the compaction still runs
        } // released: the compaction goes on and ends after the close
        compaction.join(30_000);
        assertThat(compaction.isAlive()).isFalse();
        return compactionError.get();
    }

    @Test
    void aCompactionEndingAfterClose_deletesNoInput_andLeavesNoOutput() throws Exception {
        File dir = new File(tmp, "primary");
        LsmStore store = storeWithTwoFiles(dir);
        Set<String> inputs = files(dir);
        assertThat(inputs).hasSize(2);

        Throwable compactionError =
                compactionAcrossClose(
                        store, dir, FsOp.READ, ".*", "the compaction reads its inputs");

        assertThat(compactionError)
                .as("the compaction learns that the store closed")
                .isNotNull()
                .hasMessageContaining("closed");
        assertThat(files(dir)).as("inputs kept, outputs deleted").isEqualTo(inputs);
        assertThat(List.of(dir.list())).allMatch(n -> !n.contains(".tmp"));
    }

    /**
     * As above, with the compaction past its last entry when the store closes (its output's upload
     * hangs in the stream's close, as a large upload to an object store does), so that it does not
     * stop at an entry: the install after the close is refused, the inputs stay and the output is
     * deleted. From a review: the test above now stops the compaction at its next entry, before it
     * reaches the install. The close waits its bounded time, then returns while the upload hangs.
     */
    @Test
    void aCompactionPastItsLastEntryWhenTheStoreCloses_installsNothing() throws Exception {
        File dir = new File(tmp, "primary-last");
        LsmStore store = storeWithTwoFiles(dir);
        Set<String> inputs = files(dir);

        Throwable compactionError =
                compactionAcrossClose(
                        store, dir, FsOp.CLOSE, ".*\\.sst", "the compaction uploads its output");

        assertThat(compactionError)
                .as("the install learns that the store closed")
                .isNotNull()
                .hasMessageContaining("store is closed; the result");
        assertThat(files(dir)).as("inputs kept, output deleted").isEqualTo(inputs);
    }

    /**
     * A trivial move (a file moved down a level without rewriting) names the same file as its
     * "output". Found in a review: when the store closed between the move's pick and its install,
     * the install deleted its outputs as results nobody references, which for a move is the live
     * input itself, a file the last completed checkpoint may name. The window has no I/O in it, so
     * the close races the move many times; the assertion holds whoever wins.
     */
    @Test
    void aTrivialMoveEndingAfterClose_keepsTheMovedFile() throws Exception {
        Random random = new Random(11);
        for (int round = 0; round < 300; round++) {
            File dir = new File(tmp, "move-" + round);
            LsmOptions options =
                    new LsmOptions(fs, new Path(dir.toURI()), SPAN)
                            .l0CompactionTrigger(1)
                            .levelBaseBytes(1) // level 1 always over its target: move it down
                            .backgroundCompaction(false)
                            .blockCache(new BlockCache(1 << 20));
            LsmStore store = LsmStore.open(options);
            for (int i = 0; i < 20; i++) {
                store.put(LsmModelRunner.key(i % 4, 0, i), ("v" + i).getBytes());
            }
            store.flush();
            assertThat(store.compactOnce()).as("level 0 into level 1").isTrue();
            store.awaitQueuedDeletes(); // the level-0 input is deleted on the delete thread
            Set<String> live = files(dir);
            assertThat(live).hasSize(1);
            assertThat(store.filesPerLevel()[1]).isEqualTo(1);

            AtomicBoolean started = new AtomicBoolean();
            AtomicReference<Exception> moveError = new AtomicReference<>();
            Thread mover =
                    new Thread(
                            () -> {
                                try {
                                    started.set(true);
                                    store.compactOnce(); // the trivial move, or "store is closed"
                                } catch (Exception e) {
                                    moveError.set(e); // closed before or during the move
                                }
                            },
                            "move");
            mover.start();
            while (!started.get()) {
                Thread.onSpinWait();
            }
            // close at a different point of the move each round (a few microseconds long)
            long closeAt = System.nanoTime() + random.nextInt(40_000);
            while (System.nanoTime() < closeAt) {
                Thread.onSpinWait();
            }
            store.close();
            mover.join(30_000);
            assertThat(mover.isAlive()).isFalse();
            if (moveError.get() != null) { // only the close may stop the move
                assertThat(moveError.get()).hasMessageContaining("closed");
            }
            assertThat(files(dir)).as("round %d: the moved file is kept", round).isEqualTo(live);
        }
    }
}
