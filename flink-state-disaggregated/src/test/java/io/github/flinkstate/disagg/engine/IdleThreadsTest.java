package io.github.flinkstate.disagg.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.testutil.LsmModelRunner;
import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A store that is never closed must not keep threads: Flink does not dispose a keyed backend whose
 * changelog replay failed (its restore throws before the backend is handed to anyone), so that
 * backend's store stays open for as long as the TaskManager runs. Its flush and compaction threads
 * used to live until then, two per failed restore; now every background thread of a store ends when
 * it has been idle for {@link LsmStore#IDLE_THREAD_SECONDS}, and starts again when needed.
 */
@Timeout(120)
class IdleThreadsTest {

    private static final KeyGroupSpan SPAN = KeyGroupSpan.of(0, 3);

    @TempDir File tmp;

    @Test
    void anIdleStoreKeepsNoThread_andStartsThemAgainWhenNeeded() throws Exception {
        List<Thread> before = storeThreads();
        LsmOptions options =
                new LsmOptions(FileSystem.getLocalFileSystem(), new Path(tmp.toURI()), SPAN)
                        .memtableBytes(64 << 10)
                        .l0CompactionTrigger(2)
                        .blockCache(new BlockCache(1 << 20));
        LsmStore store = LsmStore.open(options); // never closed, as after a failed replay
        write(store, 0);
        List<Thread> started = storeThreads();
        started.removeAll(before);
        assertThat(started).as("the writes started background threads").isNotEmpty();

        Waits.until(
                "the idle threads " + alive(started) + " of the store ended",
                Duration.ofSeconds(LsmStore.IDLE_THREAD_SECONDS * 4),
                () -> alive(started).isEmpty());

        write(store, 1); // flushes and compactions run again, on new background threads
        List<Thread> restarted = storeThreads();
        restarted.removeAll(before);
        assertThat(restarted).as("background threads started again").isNotEmpty();
        for (int i = 0; i < 2_000; i++) {
            assertThat(store.get(LsmModelRunner.key(i % 4, 0, i))).isEqualTo(value(1, i));
        }
    }

    private static void write(LsmStore store, int round) throws Exception {
        for (int file = 0; file < 3; file++) {
            for (int i = 0; i < 2_000; i++) {
                store.put(LsmModelRunner.key(i % 4, 0, i), value(round, i));
            }
            store.flush();
        }
        store.compactAll();
    }

    private static byte[] value(int round, int i) {
        return ("value-" + round + "-" + i).getBytes();
    }

    private static List<Thread> storeThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("lsm-"))
                .collect(Collectors.toList());
    }

    private static List<String> alive(List<Thread> threads) {
        return threads.stream()
                .filter(Thread::isAlive)
                .map(Thread::getName)
                .collect(Collectors.toList());
    }
}
