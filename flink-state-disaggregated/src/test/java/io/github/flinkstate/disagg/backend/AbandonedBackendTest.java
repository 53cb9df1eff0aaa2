package io.github.flinkstate.disagg.backend;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.DisaggregatedOptions;
import io.github.flinkstate.disagg.DisaggregatedStateBackend;
import io.github.flinkstate.disagg.backend.memory.SlotMemory;
import io.github.flinkstate.disagg.backend.testutil.DisaggBackends;
import io.github.flinkstate.disagg.backend.testutil.KeyedFixture;
import io.github.flinkstate.disagg.backend.testutil.LocalDirs;
import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.runtime.memory.OpaqueMemoryResource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A keyed backend that nobody disposes is released once the garbage collector finds it unreachable.
 * Flink's changelog backend drops this backend that way when the replay of its log fails
 * (ChangelogMaterializationOverDisaggregatedTest in the composition tests runs that case); such a
 * backend used to keep, until the TaskManager ended, its local cache directory (locked, so no later
 * backend deleted it), its memtable charges on the slot's memory and the engine files it had
 * flushed. A disposed backend is released at once. (That the watcher thread ends once no backend is
 * pending is not checked here: the test JVM is shared with other test classes, whose backends may
 * still be pending.)
 */
@Timeout(120)
class AbandonedBackendTest {

    private static final KeyedFixture FIXTURE = new KeyedFixture(3_000);

    @TempDir File tmp;

    @Test
    void aBackendDroppedWithoutDispose_isReleasedWhenCollected() throws Exception {
        try (DisaggBackends backends = new DisaggBackends(backend())) {
            OpaqueMemoryResource<SlotMemory> slot =
                    SlotMemory.acquire(backends.environment().getMemoryManager(), 8 << 20, 0.5, 0);
            try {
                writeAndAbandon(backends);
                assertThat(cacheDirectories()).as("local cache directories in use").hasSize(1);
                assertThat(primaryFiles()).as("engine files flushed").isNotEmpty();
                assertThat(slot.getResourceHandle().writeBuffers().usedBytes())
                        .as("memtable bytes charged to the slot")
                        .isPositive();

                Waits.until(
                        "the abandoned backend was released",
                        Duration.ofSeconds(60),
                        () -> {
                            System.gc();
                            return cacheDirectories().isEmpty()
                                    && primaryFiles().isEmpty()
                                    && slot.getResourceHandle().writeBuffers().usedBytes() == 0;
                        });
            } finally {
                slot.close();
            }
        }
    }

    @Test
    void aDisposedBackend_isReleasedAtOnce() throws Exception {
        try (DisaggBackends backends = new DisaggBackends(backend())) {
            DisaggregatedKeyedStateBackend<Integer> b =
                    backends.create(DisaggBackends.ALL, List.of());
            FIXTURE.write(b, 1);
            assertThat(AbandonedBackendRelease.watching()).isTrue();
            backends.dispose(b);
            assertThat(cacheDirectories()).as("local cache directories in use").isEmpty();
            assertThat(primaryFiles()).as("engine files left").isEmpty();
        }
    }

    /** Its own method, so that no local variable of the test keeps the backend reachable. */
    private static void writeAndAbandon(DisaggBackends backends) throws Exception {
        DisaggregatedKeyedStateBackend<Integer> b = backends.create(DisaggBackends.ALL, List.of());
        FIXTURE.write(b, 1); // 3000 keys through 64 KiB memtables: several flushes
        FIXTURE.verify(b, 1);
        new KeyedFixture(1).write(b, 2); // and a memtable holding something
        backends.abandon(b);
    }

    private DisaggregatedStateBackend backend() {
        return DisaggBackends.backend(primary().toURI().toString(), MemorySize.parse("64kb"))
                .with(DisaggregatedOptions.LOCAL_DIRECTORY, new File(tmp, "local").getPath())
                .with(DisaggregatedOptions.LOCAL_CACHE_SIZE, MemorySize.parse("16mb"));
    }

    private File primary() {
        return new File(tmp, "primary");
    }

    private List<String> primaryFiles() {
        try {
            return LocalDirs.files(primary());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private List<String> cacheDirectories() {
        File[] dirs = new File(new File(tmp, "local"), "disaggregated-cache").listFiles();
        return dirs == null ? List.of() : List.of(dirs).stream().map(File::getName).toList();
    }
}
