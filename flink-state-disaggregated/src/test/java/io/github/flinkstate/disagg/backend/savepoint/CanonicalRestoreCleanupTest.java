package io.github.flinkstate.disagg.backend.savepoint;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.DisaggregatedOptions;
import io.github.flinkstate.disagg.DisaggregatedStateBackend;
import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.Hang;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import io.github.flinkstate.testing.fs.Latency;
import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A restore from a canonical savepoint that Flink cancels fails on an interrupted task thread and
 * cleans up there: the files it had written must still be deleted (nothing else knows of them). On
 * a DFS whose calls are interruptible (HDFS, S3; here a delete with an injected delay) a delete on
 * an interrupted thread fails at once. Found in a review: the native restore's clean-up set the
 * interrupt aside for its deletes, the canonical restore's did not, and its files stayed.
 */
@Timeout(120)
class CanonicalRestoreCleanupTest {

    private static final ValueStateDescriptor<String> VALUE =
            new ValueStateDescriptor<>("v", StringSerializer.INSTANCE);

    private final InjectingFileSystem fs = InjectingFileSystem.shared();

    @TempDir File tmp;

    @AfterEach
    void reset() {
        Thread.interrupted();
        fs.reset();
    }

    @Test
    void aCancelledCanonicalRestore_deletesTheFilesItWrote() throws Exception {
        try (SavepointHarness h = new SavepointHarness(tmp, 128)) {
            KeyGroupRange all = h.range(1, 0);
            AbstractKeyedStateBackend<String> source =
                    h.create(SavepointHarness.Kind.HASHMAP, all, List.of());
            ValueState<String> v =
                    source.getPartitionedState(
                            VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, VALUE);
            char[] filler = new char[200];
            Arrays.fill(filler, 'x');
            for (int i = 0; i < 20_000; i++) {
                source.setCurrentKey("key-" + i);
                v.update(i + new String(filler));
            }
            KeyedStateHandle savepoint = h.savepoint(source);

            File primary = new File(tmp, "primary-inject");
            DisaggregatedStateBackend ours =
                    new DisaggregatedStateBackend()
                            .with(DisaggregatedOptions.PRIMARY_DIRECTORY, fs.uri(primary))
                            .with(DisaggregatedOptions.MEMTABLE_SIZE, MemorySize.parse("64kb"));
            fs.latency(FsOp.DELETE, Latency.fixed(Duration.ofMillis(5)));
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread restore;
            // the third file's upload hangs: two are written, then the restore waits for a flush
            try (Hang third = fs.hang(FsOp.CREATE, ".*-000003\\.sst")) {
                restore =
                        new Thread(
                                () -> {
                                    try {
                                        h.create(ours, all, List.of(savepoint));
                                    } catch (Throwable t) {
                                        failure.set(t);
                                    }
                                },
                                "restoring-task");
                restore.start();
                Waits.until(
                        "the restore waits for a hung flush",
                        Duration.ofSeconds(60),
                        () -> third.blockedCalls() == 1 && sstFiles(primary) >= 2);
                // Flink cancels the task: its wait for the flush ends with the interrupt set,
                // and the clean-up runs on the interrupted thread
                restore.interrupt();
            } // the hang ends: the hung flush finishes after the store closed
            restore.join(60_000);
            assertThat(restore.isAlive()).isFalse();
            assertThat(failure.get())
                    .as("the restore failed for the cancellation")
                    .isNotNull()
                    .hasStackTraceContaining("nterrupt");
            // the restore's own files are gone once it failed; the hung flush, released above,
            // may still be writing its file, which it deletes itself when it finds the store
            // closed (LsmStore.install): so the directory empties soon, but not necessarily yet
            Waits.until(
                    "the files of the failed restore and of its late flush are deleted",
                    Duration.ofSeconds(30),
                    () -> sstFiles(primary) == 0);
        }
    }

    private static int sstFiles(File dir) {
        int n = 0;
        File[] subdirs = dir.listFiles();
        if (subdirs == null) {
            return 0;
        }
        for (File d : subdirs) {
            n += countSst(d);
        }
        return n;
    }

    private static int countSst(File f) {
        if (f.isFile()) {
            return f.getName().endsWith(".sst") ? 1 : 0;
        }
        int n = 0;
        File[] children = f.listFiles();
        if (children != null) {
            for (File c : children) {
                n += countSst(c);
            }
        }
        return n;
    }
}
