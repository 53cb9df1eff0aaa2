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
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A delete of an obsolete file that hangs (an object store that stops answering) must not hold up
 * compactions: before, a compaction deleted its inputs on its own thread after installing its
 * result, so one hanging delete stopped every later compaction and, at the level-0 stop trigger,
 * every write. Deletes now run on the store's delete thread.
 */
@Timeout(60)
class HangingDeleteTest {

    private static final KeyGroupSpan SPAN = KeyGroupSpan.of(0, 3);

    @TempDir File tmp;

    private final InjectingFileSystem fs = new InjectingFileSystem(FileSystem.getLocalFileSystem());

    private static Set<String> sstFiles(File dir) {
        Set<String> names = new TreeSet<>();
        for (String name : dir.list()) {
            if (name.endsWith(".sst")) {
                names.add(name);
            }
        }
        return names;
    }

    private static void writeFiles(LsmStore store, int files, int round) throws Exception {
        for (int file = 0; file < files; file++) {
            for (int i = 0; i < 100; i++) {
                store.put(
                        LsmModelRunner.key(i % 4, 0, i),
                        ("v" + round + "-" + file + "-" + i).getBytes());
            }
            store.flush();
        }
    }

    @Test
    void compactionsGoOn_whileTheDeleteOfTheirInputsHangs() throws Exception {
        File dir = new File(tmp, "primary");
        LsmOptions options =
                new LsmOptions(fs, new Path(dir.toURI()), SPAN)
                        .blockSize(256)
                        .l0CompactionTrigger(2)
                        .backgroundCompaction(false)
                        .blockCache(new BlockCache(1 << 20));
        LsmStore store = LsmStore.open(options);
        Hang deletes = fs.hang(FsOp.DELETE, Pattern.quote(InjectingFileSystem.key(dir)) + ".*");
        try {
            writeFiles(store, 2, 0);
            compactOnThread(store, "first compaction");
            Waits.until(
                    "a delete of the first compaction's inputs is attempted",
                    Duration.ofSeconds(30),
                    () -> deletes.blockedCalls() > 0);

            writeFiles(store, 2, 1);
            compactOnThread(store, "second compaction, with a delete still hanging");
            for (int i = 0; i < 100; i++) {
                assertThat(new String(store.get(LsmModelRunner.key(i % 4, 0, i))))
                        .isEqualTo("v1-1-" + i);
            }
            assertThat(store.filesPerLevel()[0]).isZero();
        } finally {
            deletes.release();
        }
        Waits.until(
                "the inputs of both compactions deleted once the storage answers",
                Duration.ofSeconds(30),
                () -> sstFiles(dir).size() == 1);
        store.close();
        assertThat(sstFiles(dir)).hasSize(1);
    }

    /** Runs one compaction on another thread and fails if it does not end. */
    private static void compactOnThread(LsmStore store, String what) throws Exception {
        AtomicReference<Throwable> error = new AtomicReference<>();
        Thread compaction =
                new Thread(
                        () -> {
                            try {
                                assertThat(store.compactOnce()).as(what).isTrue();
                            } catch (Throwable t) {
                                error.set(t);
                            }
                        },
                        "compaction");
        compaction.start();
        compaction.join(20_000);
        assertThat(compaction.isAlive()).as("%s ended", what).isFalse();
        assertThat(error.get()).as(what).isNull();
    }
}
