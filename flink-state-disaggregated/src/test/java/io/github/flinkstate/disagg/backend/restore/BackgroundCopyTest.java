package io.github.flinkstate.disagg.backend.restore;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.DisaggregatedOptions;
import io.github.flinkstate.disagg.DisaggregatedStateBackend;
import io.github.flinkstate.disagg.backend.DisaggregatedKeyedStateBackend;
import io.github.flinkstate.disagg.backend.testutil.DisaggBackends;
import io.github.flinkstate.disagg.backend.testutil.JobCheckpoints;
import io.github.flinkstate.disagg.backend.testutil.KeyedFixture;
import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.Hang;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.regex.Pattern;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.CheckpointType;
import org.apache.flink.runtime.checkpoint.CompletedCheckpoint;
import org.apache.flink.runtime.state.CheckpointStorageLocation;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.util.FileUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The background copy of inherited files (option {@code background-copy-after-restore}): a backend
 * restored from another job's files (here: another primary directory, as after a NO_CLAIM resume of
 * a retained checkpoint) copies them into its own directory right after the restore; Flink's forced
 * full checkpoint then creates no engine file, names no file of the old job, and restores after the
 * old files are deleted. With the claim mode CLAIM in the configuration, or the option off, nothing
 * is copied. Disposing the backend while the copy hangs stops it and leaves no copy behind.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class BackgroundCopyTest {

    private static final int KEYS = 3000;

    @TempDir File tmp;

    private final InjectingFileSystem fs = InjectingFileSystem.shared();
    private final KeyedFixture fixture = new KeyedFixture(KEYS);
    private final List<DisaggBackends> open = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        fs.heal();
        for (DisaggBackends b : open) {
            b.close();
        }
    }

    private DisaggBackends job(String primary, UnaryOperator<DisaggregatedStateBackend> config) {
        DisaggBackends b =
                new DisaggBackends(
                        config.apply(
                                DisaggBackends.backend(
                                        fs.uri(new File(tmp, primary)), MemorySize.parse("64kb"))));
        open.add(b);
        return b;
    }

    /** Job 1: one subtask with version 1 of the fixture, checkpointed; the backend is disposed. */
    private List<KeyedStateHandle> oldJobCheckpoint() throws Exception {
        DisaggBackends job1 = job("old", UnaryOperator.identity());
        DisaggregatedKeyedStateBackend<Integer> b = job1.create(DisaggBackends.ALL, List.of());
        fixture.write(b, 1);
        JobCheckpoints checkpoints =
                new JobCheckpoints(fs.uri(new File(tmp, "chk1")), 1, true, RecoveryClaimMode.CLAIM);
        CompletedCheckpoint cp = checkpoint(checkpoints, b, 1, false);
        job1.dispose(b);
        return JobCheckpoints.handlesFor(cp, DisaggBackends.ALL);
    }

    private static CompletedCheckpoint checkpoint(
            JobCheckpoints job, DisaggregatedKeyedStateBackend<Integer> b, long id, boolean full)
            throws Exception {
        CheckpointStorageLocation location = job.start(id);
        CheckpointOptions options =
                full
                        ? new CheckpointOptions(
                                CheckpointType.FULL_CHECKPOINT,
                                CheckpointStorageLocationReference.getDefault())
                        : CheckpointOptions.forCheckpointWithDefaultLocation();
        job.acknowledge(
                id,
                0,
                DisaggBackends.snapshot(b, id, location, options).getJobManagerOwnedSnapshot());
        CompletedCheckpoint cp = job.complete(id, 1);
        b.notifyCheckpointComplete(id);
        return cp;
    }

    /** The prefix of every path under {@code tmp/dir}, as the kit's counters and paths name it. */
    private String under(String dir) {
        String key = InjectingFileSystem.key(new File(tmp, dir));
        return key.endsWith("/") ? key : key + "/";
    }

    @Test
    void inheritedFilesAreCopiedInTheBackground_andTheFullCheckpointCopiesNothing()
            throws Exception {
        List<KeyedStateHandle> old = oldJobCheckpoint();
        DisaggregatedKeyedStateBackend<Integer> b =
                job("new", UnaryOperator.identity()).create(DisaggBackends.ALL, old);
        b.inheritedCopy().awaitDone();
        assertThat(b.store().liveFiles()).isNotEmpty().noneMatch(f -> f.contains(under("old")));
        assertThat(fixture.verify(b, 1)).isEqualTo(KEYS);

        // Flink's forced full checkpoint after a NO_CLAIM resume: no engine file is created
        JobCheckpoints job2 =
                new JobCheckpoints(
                        fs.uri(new File(tmp, "chk2")), 1, true, RecoveryClaimMode.NO_CLAIM);
        fs.counters().reset();
        CompletedCheckpoint full = checkpoint(job2, b, 2, true);
        assertThat(fs.counters().callsUnder(FsOp.CREATE, under("new")))
                .as("engine files created by the full checkpoint")
                .isZero();
        assertThat(JobCheckpoints.engineFiles(full))
                .isNotEmpty()
                .noneMatch(f -> f.contains(under("old")));

        // the old job's files are no longer needed
        FileUtils.deleteDirectory(new File(tmp, "old"));
        DisaggregatedKeyedStateBackend<Integer> restored =
                job("new", UnaryOperator.identity())
                        .create(
                                DisaggBackends.ALL,
                                JobCheckpoints.handlesFor(full, DisaggBackends.ALL));
        assertThat(restored.inheritedCopy().isDone()).isTrue();
        assertThat(fixture.verify(restored, 1)).isEqualTo(KEYS);
    }

    @Test
    void claimModeInTheConfiguration_orTheOptionOff_copiesNothing() throws Exception {
        List<KeyedStateHandle> old = oldJobCheckpoint();
        List<UnaryOperator<DisaggregatedStateBackend>> configs =
                List.of(
                        c -> c.with(StateRecoveryOptions.RESTORE_MODE, RecoveryClaimMode.CLAIM),
                        c -> c.with(DisaggregatedOptions.BACKGROUND_COPY, false));
        for (UnaryOperator<DisaggregatedStateBackend> config : configs) {
            fs.counters().reset();
            DisaggregatedKeyedStateBackend<Integer> b =
                    job("new", config).create(DisaggBackends.ALL, old);
            assertThat(b.inheritedCopy().isDone()).isTrue();
            assertThat(b.store().liveFiles())
                    .as("live files, old directory %s", under("old"))
                    .allMatch(f -> f.contains(under("old")));
            assertThat(fixture.verify(b, 1)).isEqualTo(KEYS);
            assertThat(fs.counters().callsUnder(FsOp.CREATE, under("new"))).isZero();
        }
    }

    @Test
    void disposeDuringAHangingCopy_stopsIt_andLeavesNoCopy() throws Exception {
        List<KeyedStateHandle> old = oldJobCheckpoint();
        DisaggBackends job2 = job("new", UnaryOperator.identity());
        try (Hang writes = fs.hang(FsOp.WRITE, Pattern.quote(under("new")) + ".*\\.sst")) {
            DisaggregatedKeyedStateBackend<Integer> b = job2.create(DisaggBackends.ALL, old);
            while (writes.blockedCalls() == 0) {
                Thread.sleep(10); // until a copy is stuck in the hang
            }
            assertThat(b.inheritedCopy().isDone()).isFalse();
            job2.dispose(b);
            assertThat(b.inheritedCopy().isDone()).isTrue();
        }
        File[] left = new File(tmp, "new").listFiles();
        List<String> copies = new ArrayList<>();
        for (File dir : left == null ? new File[0] : left) {
            File[] files = dir.listFiles((d, n) -> n.endsWith(".sst"));
            for (File f : files == null ? new File[0] : files) {
                copies.add(f.getPath());
            }
        }
        assertThat(copies).as("copies left behind").isEmpty();
    }
}
