package io.github.flinkstate.disagg.backend.restore;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.DisaggregatedOptions;
import io.github.flinkstate.disagg.backend.DisaggregatedKeyedStateBackend;
import io.github.flinkstate.disagg.backend.testutil.DisaggBackends;
import io.github.flinkstate.disagg.backend.testutil.JobCheckpoints;
import io.github.flinkstate.disagg.backend.testutil.KeyedFixture;
import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import java.io.File;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.CompletedCheckpoint;
import org.apache.flink.runtime.state.CheckpointStorageLocation;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a restore reads, counted per file by the test kit's {@link InjectingFileSystem} (primary
 * directory and checkpoint storage both on {@code inject://}): restoring and rescaling 2 -> 1, 2 ->
 * 3 and 1 -> 2 -> 1 reads the checkpoint's meta streams and no byte of any engine (SST) file; the
 * first state access then opens only the files it needs; every value is right afterwards; a file
 * that arrives through two handles (1 -> 2 -> 1) is opened once.
 *
 * <p>Every transition prints one line with its figures ({@code restore-reads ...}) to stdout.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LazyRestoreReadsTest {

    private static final int KEYS = 3000;

    @TempDir File tmp;

    private final InjectingFileSystem fs = InjectingFileSystem.shared();
    private final KeyedFixture fixture = new KeyedFixture(KEYS);
    private DisaggBackends backends;
    private String primary;
    private String checkpoints;
    private JobCheckpoints job;
    private long nextCheckpoint = 1;

    @BeforeEach
    void setUp() throws Exception {
        primary = InjectingFileSystem.key(new File(tmp, "primary"));
        checkpoints = InjectingFileSystem.key(new File(tmp, "chk"));
        backends =
                new DisaggBackends(
                        DisaggBackends.backend(
                                        fs.uri(new File(tmp, "primary")), MemorySize.parse("64kb"))
                                // what the restore itself reads; the background warm-up of the
                                // local disk cache reads files by design
                                .with(DisaggregatedOptions.LOCAL_CACHE_WARM_UP, false));
        job = new JobCheckpoints(fs.uri(new File(tmp, "chk")), 1, false, RecoveryClaimMode.DEFAULT);
    }

    @AfterEach
    void tearDown() throws Exception {
        backends.close();
    }

    /** Backends of {@code parallelism} subtasks, each with version 1 of the fixture. */
    private List<DisaggregatedKeyedStateBackend<Integer>> written(int parallelism)
            throws Exception {
        List<DisaggregatedKeyedStateBackend<Integer>> out = new ArrayList<>();
        for (KeyGroupRange r : DisaggBackends.ranges(parallelism)) {
            DisaggregatedKeyedStateBackend<Integer> b = backends.create(r, List.of());
            fixture.write(b, 1);
            out.add(b);
        }
        return out;
    }

    private CompletedCheckpoint checkpoint(List<DisaggregatedKeyedStateBackend<Integer>> subtasks)
            throws Exception {
        long id = nextCheckpoint++;
        CheckpointStorageLocation location = job.start(id);
        for (int i = 0; i < subtasks.size(); i++) {
            KeyedStateHandle h =
                    DisaggBackends.snapshot(
                                    subtasks.get(i),
                                    id,
                                    location,
                                    CheckpointOptions.forCheckpointWithDefaultLocation())
                            .getJobManagerOwnedSnapshot();
            job.acknowledge(id, i, h);
        }
        CompletedCheckpoint cp = job.complete(id, subtasks.size());
        subtasks.forEach(b -> b.notifyCheckpointComplete(id));
        return cp;
    }

    /**
     * Restores {@code parallelism} subtasks from {@code cp} and checks, per subtask, that the
     * restore read no engine file, that the first point read opens only what it needs, and that all
     * values are right; returns the subtasks.
     */
    private List<DisaggregatedKeyedStateBackend<Integer>> restore(
            String transition, CompletedCheckpoint cp, int parallelism) throws Exception {
        List<DisaggregatedKeyedStateBackend<Integer>> out = new ArrayList<>();
        for (KeyGroupRange r : DisaggBackends.ranges(parallelism)) {
            List<KeyedStateHandle> handles = JobCheckpoints.handlesFor(cp, r);
            fs.counters().reset();
            DisaggregatedKeyedStateBackend<Integer> b = backends.create(r, handles);
            long metaBytes = fs.counters().bytesUnder(FsOp.READ, checkpoints + "/");
            long metaOpens = fs.counters().callsUnder(FsOp.OPEN, checkpoints + "/");
            long sstBytes = fs.counters().bytesUnder(FsOp.READ, primary + "/");
            long sstOpens = fs.counters().callsUnder(FsOp.OPEN, primary + "/");
            long writes = fs.counters().callsUnder(FsOp.CREATE, InjectingFileSystem.key(tmp));
            assertThat(metaOpens)
                    .as("%s %s: one meta stream per handle", transition, r)
                    .isEqualTo(handles.size());
            assertThat(sstOpens)
                    .as("%s %s: engine files opened by the restore", transition, r)
                    .isZero();
            assertThat(sstBytes)
                    .as("%s %s: engine bytes read by the restore", transition, r)
                    .isZero();
            assertThat(writes).as("%s %s: files written by the restore", transition, r).isZero();

            fs.counters().reset();
            assertThat(fixture.readFirst(b)).isNotNull();
            long firstReadBytes = fs.counters().bytesUnder(FsOp.READ, primary + "/");
            long firstReadOpens = fs.counters().callsUnder(FsOp.OPEN, primary + "/");
            int liveFiles = new HashSet<>(b.store().liveFiles()).size();
            assertThat(firstReadOpens)
                    .as("%s %s: the first point read opens only candidate files", transition, r)
                    .isBetween(1L, (long) liveFiles);

            int keys = fixture.verify(b, 1);
            for (String path : fs.counters().paths(FsOp.OPEN)) {
                if (path.startsWith(primary + "/")) {
                    assertThat(fs.counters().calls(FsOp.OPEN, path))
                            .as(
                                    "%s %s: opens of %s (first read and full verify)",
                                    transition, r, path)
                            .isLessThanOrEqualTo(1);
                }
            }
            System.out.printf(
                    "restore-reads %s subtask %s: handles=%d meta-stream bytes=%d (opens %d),"
                            + " engine bytes=%d (opens %d); first point read: engine bytes=%d"
                            + " (opens %d of %d live files); %d keys verified%n",
                    transition,
                    r,
                    handles.size(),
                    metaBytes,
                    metaOpens,
                    sstBytes,
                    sstOpens,
                    firstReadBytes,
                    firstReadOpens,
                    liveFiles,
                    keys);
            out.add(b);
        }
        return out;
    }

    @Test
    void rescale_2_to_1_and_2_to_3_readNoEngineFileBeforeFirstAccess() throws Exception {
        List<DisaggregatedKeyedStateBackend<Integer>> two = written(2);
        CompletedCheckpoint cp = checkpoint(two);
        // the old tasks are gone before a restore (and their compactions with them)
        two.forEach(backends::dispose);
        assertThat(cp.getOperatorStates().values().iterator().next().getStates()).hasSize(2);
        restore("2->1", cp, 1).forEach(backends::dispose);
        restore("2->3", cp, 3).forEach(backends::dispose);
    }

    @Test
    void rescale_1_2_1_opensEachSharedFileOnce() throws Exception {
        List<DisaggregatedKeyedStateBackend<Integer>> one = written(1);
        CompletedCheckpoint oneCp = checkpoint(one);
        Set<String> first = files(JobCheckpoints.handlesFor(oneCp, DisaggBackends.ALL).get(0));
        one.forEach(backends::dispose);
        List<DisaggregatedKeyedStateBackend<Integer>> two = restore("1->2", oneCp, 2);
        CompletedCheckpoint twoCp = checkpoint(two);
        two.forEach(backends::dispose);

        List<KeyedStateHandle> handles = JobCheckpoints.handlesFor(twoCp, DisaggBackends.ALL);
        assertThat(handles).hasSize(2);
        Set<String> left = files(handles.get(0));
        Set<String> right = files(handles.get(1));
        Set<String> both = new HashSet<>(left);
        both.retainAll(right);
        assertThat(both)
                .as("without writes the two subtasks still read the files of the first checkpoint")
                .isEqualTo(first);

        DisaggregatedKeyedStateBackend<Integer> merged = restore("1->2->1", twoCp, 1).get(0);
        Set<String> union = new HashSet<>(left);
        union.addAll(right);
        assertThat(new HashSet<>(merged.store().liveFiles()))
                .as("the merged store reads the files of both handles in place")
                .isEqualTo(union);
        // restore() checked that the full read opened every file once at most; a second full
        // read opens nothing
        fs.counters().reset();
        fixture.verify(merged, 1);
        assertThat(fs.counters().callsUnder(FsOp.OPEN, primary + "/")).isZero();
    }

    private static Set<String> files(KeyedStateHandle h) {
        Set<String> out = new HashSet<>();
        for (HandleAndLocalPath e : ((IncrementalRemoteKeyedStateHandle) h).getSharedState()) {
            out.add(((FileStateHandle) e.getHandle()).getFilePath().toString());
        }
        return out;
    }
}
