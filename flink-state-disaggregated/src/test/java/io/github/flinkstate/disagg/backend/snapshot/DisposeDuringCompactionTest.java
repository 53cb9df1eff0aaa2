package io.github.flinkstate.disagg.backend.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.DisaggregatedOptions;
import io.github.flinkstate.disagg.backend.DisaggregatedKeyedStateBackend;
import io.github.flinkstate.disagg.backend.testutil.DisaggBackends;
import io.github.flinkstate.disagg.backend.testutil.JobCheckpoints;
import io.github.flinkstate.disagg.backend.testutil.KeyedFixture;
import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.Hang;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.state.CheckpointStorageLocation;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A task disposed while its store compacts: the compaction's output, which no checkpoint ever
 * named, is the store's to delete, also when the compaction finishes only while the store closes
 * (the dispose used to list the files to delete before waiting for the compaction, so the output
 * leaked; now a closing store installs no compaction result and deletes its output). The compaction
 * is held in its first read of an input file by the test kit's hang.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DisposeDuringCompactionTest {

    @TempDir File tmp;

    private final InjectingFileSystem fs = InjectingFileSystem.shared();

    @AfterEach
    void heal() {
        fs.heal();
    }

    @Test
    void compactionOutputFinishedDuringDispose_isDeleted() throws Exception {
        String primary = InjectingFileSystem.key(new File(tmp, "primary")) + "/";
        KeyedFixture fixture = new KeyedFixture(1000);
        try (DisaggBackends backends =
                new DisaggBackends(
                        DisaggBackends.backend(
                                        fs.uri(new File(tmp, "primary")), MemorySize.parse("1mb"))
                                // the compaction must read its inputs from the primary files,
                                // where the hang is, not from local copies
                                .with(DisaggregatedOptions.LOCAL_CACHE_SIZE, MemorySize.ZERO))) {
            JobCheckpoints job =
                    new JobCheckpoints(
                            fs.uri(new File(tmp, "chk")), 1, false, RecoveryClaimMode.DEFAULT);
            DisaggregatedKeyedStateBackend<Integer> b =
                    backends.create(DisaggBackends.ALL, List.of());
            Hang reads = fs.hang(FsOp.READ, Pattern.quote(primary) + ".*\\.sst");
            // four checkpoints, four flushed files: the fourth flush starts an L0 compaction,
            // which blocks in its first read
            for (int id = 1; id <= 4; id++) {
                fixture.write(b, id);
                CheckpointStorageLocation location = job.start(id);
                job.acknowledge(
                        id,
                        0,
                        DisaggBackends.snapshot(
                                        b,
                                        id,
                                        location,
                                        CheckpointOptions.forCheckpointWithDefaultLocation())
                                .getJobManagerOwnedSnapshot());
                job.complete(id, 1);
                b.notifyCheckpointComplete(id);
            }
            Waits.until(
                    "the compaction reads its first input",
                    Duration.ofSeconds(30),
                    () -> reads.blockedCalls() > 0);

            Thread disposer = new Thread(() -> backends.dispose(b), "dispose");
            disposer.start();
            Waits.until(
                    "the dispose waits for the compaction",
                    Duration.ofSeconds(30),
                    () -> disposer.getState() == Thread.State.TIMED_WAITING);
            reads.release();
            disposer.join(TimeUnit.SECONDS.toMillis(30));
            assertThat(disposer.isAlive()).isFalse();
            // a closing store installs nothing: the compaction ended without a new version, and
            // its output, which no version named, was deleted (CloseDuringCompactionTest)
            assertThat(b.store().stats().compactions()).as("compactions installed").isZero();

            job.shutdown(JobStatus.CANCELED); // the job ends: its checkpoints are discarded
            Set<String> left =
                    new HashSet<>(
                            List.of(new File(tmp, "primary").listFiles()).stream()
                                    .flatMap(d -> List.of(d.listFiles()).stream())
                                    .map(f -> f.getName())
                                    .collect(Collectors.toSet()));
            assertThat(left).as("engine files left after the job ended").isEmpty();
        }
    }
}
