package io.github.flinkstate.disagg.backend.restore;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import io.github.flinkstate.testing.fs.Latency;
import java.io.File;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A restore that Flink cancels fails on an interrupted task thread, and cleans up there: the files
 * it wrote back must still be deleted. On a DFS whose calls are interruptible (HDFS, S3, here a
 * delete with an injected delay) a delete on an interrupted thread fails at once, and the files
 * were left behind.
 */
class CleanUpOnInterruptedThreadTest {

    private final InjectingFileSystem fs = InjectingFileSystem.shared();

    @TempDir File tmp;

    @AfterEach
    void reset() {
        Thread.interrupted();
        fs.reset();
    }

    @Test
    void writtenBackFiles_areDeletedOnAnInterruptedThread_andTheInterruptIsKept() throws Exception {
        File a = new File(tmp, "restored-a");
        File b = new File(tmp, "restored-b");
        Files.writeString(a.toPath(), "a");
        Files.writeString(b.toPath(), "b");
        fs.latency(FsOp.DELETE, Latency.fixed(Duration.ofMillis(5)));

        Thread.currentThread().interrupt(); // the task was cancelled during its restore
        DisaggRestoreOperation.deleteQuietly(List.of(fs.path(a).toString(), fs.path(b).toString()));

        assertThat(Thread.interrupted()).as("the cancellation stays visible").isTrue();
        assertThat(a).doesNotExist();
        assertThat(b).doesNotExist();
    }
}
