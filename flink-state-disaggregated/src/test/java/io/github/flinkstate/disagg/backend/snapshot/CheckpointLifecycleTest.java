package io.github.flinkstate.disagg.backend.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.backend.DisaggregatedKeyedStateBackend;
import io.github.flinkstate.disagg.backend.testutil.DisaggBackends;
import io.github.flinkstate.disagg.backend.testutil.JobCheckpoints;
import io.github.flinkstate.disagg.backend.testutil.KeyedFixture;
import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.RunnableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.CheckpointType;
import org.apache.flink.runtime.checkpoint.CompletedCheckpoint;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.state.CheckpointStorageLocation;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.StateUtil;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The life of the engine files over many checkpoints, against Flink's own JobManager classes
 * ({@link JobCheckpoints}: {@code SharedStateRegistryImpl}, {@code
 * StandaloneCompletedCheckpointStore}, {@code CheckpointsCleaner}, real {@code _metadata}): a job
 * of two subtasks with a 64 KiB memtable (every checkpoint flushes, compactions run in the
 * background) takes 32 checkpoints; most complete, some are aborted by the JobManager after every
 * subtask acknowledged, some fail on one TaskManager (Flink discards that subtask's result there,
 * the others acknowledge, the JobManager aborts). Retained counts 1 and 3. Then, depending on the
 * case, a second job restores the latest retained checkpoint in CLAIM or NO_CLAIM mode, rescaled to
 * three subtasks, and takes 32 more checkpoints (in NO_CLAIM the first is Flink's forced full
 * checkpoint).
 *
 * <p>Every delete goes through the test kit's file system ({@code inject://}) and is counted per
 * path. Checked (docs/disaggregated.md, "File ownership"):
 *
 * <ol>
 *   <li>no file is ever deleted twice;
 *   <li>no premature delete: after every completed checkpoint, every file named by a retained
 *       checkpoint (and, after a NO_CLAIM restore, by the restored job's retained checkpoints)
 *       exists; at the end of each job every retained checkpoint restores with the right values;
 *   <li>no leak: when the jobs end (backends disposed, the last job cancelled so that its retained
 *       checkpoints are discarded) every engine file was deleted exactly once, except the files of
 *       checkpoints the user still owns: none without a restore or after CLAIM with retained count
 *       1; the first job's other retained checkpoints after CLAIM (minus what the claimed one
 *       shared with them, Flink's CLAIM semantics); all of the first job's retained checkpoints
 *       after NO_CLAIM, which then still restore with the right values;
 *   <li>after a NO_CLAIM restore, no checkpoint of the new job names a file of the old one.
 * </ol>
 *
 * <p>The last {@code retained + 1} checkpoints of each job complete: an aborted checkpoint newer
 * than the oldest retained one leaves its registry entries to the next completion, which a
 * cancelled job never has (Flink's behaviour for every backend, not this backend's).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CheckpointLifecycleTest {

    private static final int CHECKPOINTS = 32;
    private static final int KEYS = 1500;
    private static final int WRITES_PER_CHECKPOINT = 700;

    enum Restore {
        NONE,
        CLAIM,
        NO_CLAIM
    }

    @TempDir File tmp;

    private final InjectingFileSystem fs = InjectingFileSystem.shared();
    private String primaryKey;
    private DisaggBackends backends;
    private Random random;

    /** The model: per key its value and its map, as of now and as of each completed checkpoint. */
    private Map<Integer, Long> values = new HashMap<>();

    private Map<Integer, Map<Integer, String>> maps = new HashMap<>();
    private final Map<Long, Map<Integer, Long>> valuesAt = new HashMap<>();
    private final Map<Long, Map<Integer, Map<Integer, String>>> mapsAt = new HashMap<>();

    /** Checkpoints whose files must exist now (besides the current job's retained ones). */
    private final List<CompletedCheckpoint> protectedCheckpoints = new ArrayList<>();

    private int completed;
    private long compactions;
    private long storeDeletes;
    private long rehomed;
    private int abortedByJobManager;
    private int failedOnTaskManager;

    @BeforeEach
    void setUp() {
        fs.counters().reset();
        primaryKey = InjectingFileSystem.key(new File(tmp, "primary")) + "/";
        backends =
                new DisaggBackends(
                        DisaggBackends.backend(
                                fs.uri(new File(tmp, "primary")), MemorySize.parse("64kb")));
    }

    @AfterEach
    void tearDown() throws Exception {
        backends.close();
    }

    @ParameterizedTest(name = "retained={0}, then {1}")
    @CsvSource({"1,NONE", "3,NONE", "1,CLAIM", "3,CLAIM", "1,NO_CLAIM", "3,NO_CLAIM"})
    void everyFileIsDeletedOnce_afterNoRetainedCheckpointNeedsIt(int retained, Restore restore)
            throws Exception {
        random = new Random(retained * 31L + restore.ordinal());
        String checkpointDir = fs.uri(new File(tmp, "chk"));

        // job 1: two subtasks from scratch
        JobCheckpoints job1 =
                new JobCheckpoints(
                        checkpointDir, retained, restore != Restore.NONE, RecoveryClaimMode.CLAIM);
        List<DisaggregatedKeyedStateBackend<Integer>> subtasks = new ArrayList<>();
        for (KeyGroupRange r : DisaggBackends.ranges(2)) {
            subtasks.add(backends.create(r, List.of()));
        }
        run(job1, subtasks, retained, 1, false);
        List<CompletedCheckpoint> job1Retained = job1.retained();
        assertThat(job1Retained).hasSize(retained);
        assertRestorable(job1Retained);
        endTasks(subtasks);

        if (restore == Restore.NONE) {
            job1.shutdown(JobStatus.CANCELED);
            assertNoFileLeftBut(Set.of(), List.of());
            report(retained, restore, 0);
            return;
        }
        job1.shutdown(JobStatus.CANCELED); // the retained checkpoints stay, the user's now
        CompletedCheckpoint latest = job1Retained.get(retained - 1);
        Set<String> job1Files = new HashSet<>();
        job1Retained.forEach(cp -> job1Files.addAll(files(cp)));

        // job 2: restores the latest retained checkpoint, rescaled 2 -> 3
        RecoveryClaimMode mode =
                restore == Restore.CLAIM ? RecoveryClaimMode.CLAIM : RecoveryClaimMode.NO_CLAIM;
        JobCheckpoints job2 = new JobCheckpoints(checkpointDir, retained, false, mode);
        CompletedCheckpoint restored = job2.restore(latest, mode);
        if (mode == RecoveryClaimMode.NO_CLAIM) {
            protectedCheckpoints.addAll(job1Retained);
        }
        values = new HashMap<>(valuesAt.get(latest.getCheckpointID()));
        maps = deepCopy(mapsAt.get(latest.getCheckpointID()));
        subtasks.clear();
        for (KeyGroupRange r : DisaggBackends.ranges(3)) {
            subtasks.add(backends.create(r, JobCheckpoints.handlesFor(restored, r)));
        }
        long job2Start = latest.getCheckpointID() + 1;
        run(job2, subtasks, retained, job2Start, mode == RecoveryClaimMode.NO_CLAIM);
        if (mode == RecoveryClaimMode.NO_CLAIM) {
            for (CompletedCheckpoint cp : job2.retained()) {
                Set<String> inherited = new HashSet<>(files(cp));
                inherited.retainAll(job1Files);
                assertThat(inherited)
                        .as("files of the NO_CLAIM-restored job in checkpoint %s", cp)
                        .isEmpty();
            }
        }
        assertRestorable(job2.retained());
        endTasks(subtasks);
        job2.shutdown(JobStatus.CANCELED);

        Set<String> userOwned = new HashSet<>();
        List<CompletedCheckpoint> userCheckpoints = new ArrayList<>(job1Retained);
        if (mode == RecoveryClaimMode.NO_CLAIM) {
            userOwned.addAll(job1Files);
        } else {
            userCheckpoints.remove(latest); // claimed: job 2 discarded it
            for (CompletedCheckpoint cp : job1Retained) {
                if (cp != latest) {
                    userOwned.addAll(files(cp));
                }
            }
            userOwned.removeAll(files(latest));
        }
        assertNoFileLeftBut(userOwned, userCheckpoints);
        if (mode == RecoveryClaimMode.NO_CLAIM) {
            assertRestorable(job1Retained);
        }
        report(retained, restore, userOwned.size());
    }

    // ------------------------------------------------------------------ one job

    private void run(
            JobCheckpoints job,
            List<DisaggregatedKeyedStateBackend<Integer>> subtasks,
            int retained,
            long firstId,
            boolean firstIsFull)
            throws Exception {
        for (int i = 0; i < CHECKPOINTS; i++) {
            long id = firstId + i;
            write(subtasks);
            boolean mustComplete = i >= CHECKPOINTS - retained - 1;
            int dice = random.nextInt(100);
            CheckpointOptions options =
                    i == 0 && firstIsFull
                            ? new CheckpointOptions(
                                    CheckpointType.FULL_CHECKPOINT,
                                    CheckpointStorageLocationReference.getDefault())
                            : CheckpointOptions.forCheckpointWithDefaultLocation();
            CheckpointStorageLocation location = job.start(id);
            int failing = !mustComplete && dice >= 85 ? random.nextInt(subtasks.size()) : -1;
            for (int s = 0; s < subtasks.size(); s++) {
                RunnableFuture<SnapshotResult<KeyedStateHandle>> f =
                        subtasks.get(s).snapshot(id, 0L, location, options);
                f.run();
                if (s == failing) {
                    StateUtil.discardStateFuture(f); // as Flink's AsyncCheckpointRunnable
                } else {
                    job.acknowledge(id, s, f.get().getJobManagerOwnedSnapshot());
                }
            }
            if (failing >= 0 || (!mustComplete && dice >= 70)) {
                job.abort(id);
                subtasks.forEach(b -> b.notifyCheckpointAborted(id));
                if (failing >= 0) {
                    failedOnTaskManager++;
                } else {
                    abortedByJobManager++;
                }
            } else {
                job.complete(id, subtasks.size());
                subtasks.forEach(b -> b.notifyCheckpointComplete(id));
                valuesAt.put(id, new HashMap<>(values));
                mapsAt.put(id, deepCopy(maps));
                completed++;
                assertNoPrematureDelete(subtasks, job.retained());
            }
            assertNoDoubleDelete();
        }
    }

    private void write(List<DisaggregatedKeyedStateBackend<Integer>> subtasks) throws Exception {
        for (int n = 0; n < WRITES_PER_CHECKPOINT; n++) {
            int key = random.nextInt(KEYS);
            DisaggregatedKeyedStateBackend<Integer> b = owner(subtasks, key);
            b.setCurrentKey(key);
            int op = random.nextInt(10);
            if (op < 5) {
                long v = random.nextLong();
                KeyedFixture.value(b).update(v);
                values.put(key, v);
            } else if (op < 6) {
                KeyedFixture.value(b).clear();
                values.remove(key);
            } else if (op < 9) {
                int uk = random.nextInt(8);
                String v = "v" + random.nextInt() + "-".repeat(random.nextInt(60));
                KeyedFixture.map(b).put(uk, v);
                maps.computeIfAbsent(key, k -> new TreeMap<>()).put(uk, v);
            } else {
                KeyedFixture.map(b).clear();
                maps.remove(key);
            }
        }
    }

    private static DisaggregatedKeyedStateBackend<Integer> owner(
            List<DisaggregatedKeyedStateBackend<Integer>> subtasks, int key) {
        for (DisaggregatedKeyedStateBackend<Integer> b : subtasks) {
            if (KeyedFixture.owns(b.getKeyGroupRange(), key)) {
                return b;
            }
        }
        throw new IllegalStateException("no subtask owns key " + key);
    }

    private void report(int retained, Restore restore, int left) {
        System.out.printf(
                "lifecycle retained=%d restore=%s: %d engine files written, %d completed, %d"
                        + " aborted by the JobManager, %d failed on a TaskManager; %d compactions,"
                        + " %d obsolete files deleted by the stores, %d rehomed; %d files left to"
                        + " the user%n",
                retained,
                restore,
                createdFiles().size(),
                completed,
                abortedByJobManager,
                failedOnTaskManager,
                compactions,
                storeDeletes,
                rehomed,
                left);
    }

    /** The tasks end: their stores' figures are kept, then they are disposed. */
    private void endTasks(List<DisaggregatedKeyedStateBackend<Integer>> subtasks) {
        for (DisaggregatedKeyedStateBackend<Integer> b : subtasks) {
            compactions += b.store().stats().compactions();
            storeDeletes += b.store().stats().filesDeleted();
            rehomed += b.store().stats().filesRehomed();
            backends.dispose(b);
        }
        assertThat(compactions).as("compactions so far").isPositive();
    }

    // ------------------------------------------------------------------ checks

    private void assertNoPrematureDelete(
            List<DisaggregatedKeyedStateBackend<Integer>> subtasks,
            List<CompletedCheckpoint> retained)
            throws Exception {
        for (DisaggregatedKeyedStateBackend<Integer> b : subtasks) {
            b.store().awaitQueuedDeletes(); // the stores delete on their delete threads
        }
        List<CompletedCheckpoint> all = new ArrayList<>(retained);
        all.addAll(protectedCheckpoints);
        for (CompletedCheckpoint cp : all) {
            for (String f : files(cp)) {
                assertThat(local(f))
                        .as("file %s of retained checkpoint %d", f, cp.getCheckpointID())
                        .exists();
            }
        }
    }

    private void assertNoDoubleDelete() {
        for (String p : fs.counters().paths(FsOp.DELETE)) {
            if (!p.startsWith(primaryKey)) {
                continue; // Flink's own exclusive files and directories
            }
            assertThat(fs.counters().calls(FsOp.DELETE, p)).as("deletes of %s", p).isEqualTo(1);
        }
    }

    /**
     * Every engine file written was deleted exactly once, except {@code kept} (never deleted); no
     * other file is left but the exclusive files of the checkpoints the user still owns.
     */
    private void assertNoFileLeftBut(Set<String> kept, List<CompletedCheckpoint> userCheckpoints)
            throws IOException {
        Set<String> keptKeys =
                kept.stream().map(f -> new Path(f).toUri().getPath()).collect(Collectors.toSet());
        Set<String> created = createdFiles();
        assertThat(created).as("engine files written").isNotEmpty();
        Map<String, Long> wrong = new TreeMap<>();
        for (String p : created) {
            long deletes = fs.counters().calls(FsOp.DELETE, p);
            if (deletes != (keptKeys.contains(p) ? 0 : 1)) {
                wrong.put(p, deletes);
            }
        }
        assertThat(wrong).as("engine files deleted a wrong number of times").isEmpty();
        Set<String> left = new TreeSet<>();
        for (File dir : List.of(new File(tmp, "primary"), new File(tmp, "chk"))) {
            try (Stream<java.nio.file.Path> s = Files.walk(dir.toPath())) {
                s.filter(Files::isRegularFile).forEach(p -> left.add(p.toUri().getPath()));
            }
        }
        for (CompletedCheckpoint cp : userCheckpoints) {
            String dir = new Path(cp.getExternalPointer()).toUri().getPath();
            assertThat(new File(dir, "_metadata")).as("metadata of a user checkpoint").exists();
            left.removeIf(p -> p.startsWith(dir.endsWith("/") ? dir : dir + "/"));
        }
        assertThat(left).as("files left").isEqualTo(new TreeSet<>(keptKeys));
    }

    private Set<String> createdFiles() {
        return fs.counters().paths(FsOp.CREATE).stream()
                .filter(p -> p.startsWith(primaryKey) && p.endsWith(".sst"))
                .collect(Collectors.toCollection(TreeSet::new));
    }

    /** Restores each checkpoint on one subtask and checks every key against the model. */
    private void assertRestorable(List<CompletedCheckpoint> checkpoints) throws Exception {
        for (CompletedCheckpoint cp : checkpoints) {
            DisaggregatedKeyedStateBackend<Integer> b =
                    backends.create(
                            DisaggBackends.ALL, JobCheckpoints.handlesFor(cp, DisaggBackends.ALL));
            try {
                Map<Integer, Long> v = valuesAt.get(cp.getCheckpointID());
                Map<Integer, Map<Integer, String>> m = mapsAt.get(cp.getCheckpointID());
                for (int key = 0; key < KEYS; key++) {
                    b.setCurrentKey(key);
                    assertThat(KeyedFixture.value(b).value())
                            .as("value of key %d in checkpoint %d", key, cp.getCheckpointID())
                            .isEqualTo(v.get(key));
                    Map<Integer, String> actual = new TreeMap<>();
                    Iterable<Map.Entry<Integer, String>> entries = KeyedFixture.map(b).entries();
                    if (entries != null) {
                        entries.forEach(e -> actual.put(e.getKey(), e.getValue()));
                    }
                    assertThat(actual)
                            .as("map of key %d in checkpoint %d", key, cp.getCheckpointID())
                            .isEqualTo(m.getOrDefault(key, Map.of()));
                }
            } finally {
                backends.dispose(b);
            }
        }
    }

    // ------------------------------------------------------------------ helpers

    private static Set<String> files(CompletedCheckpoint cp) {
        Set<String> out = new HashSet<>();
        for (OperatorSubtaskState s :
                cp.getOperatorStates().values().iterator().next().getStates()) {
            for (KeyedStateHandle h : s.getManagedKeyedState()) {
                for (HandleAndLocalPath e :
                        ((IncrementalRemoteKeyedStateHandle) h).getSharedState()) {
                    StreamStateHandle sh = e.getHandle();
                    out.add(((FileStateHandle) sh).getFilePath().toString());
                }
            }
        }
        return out;
    }

    private static File local(String uri) {
        return new File(new Path(uri).toUri().getPath());
    }

    private static Map<Integer, Map<Integer, String>> deepCopy(
            Map<Integer, Map<Integer, String>> m) {
        Map<Integer, Map<Integer, String>> out = new HashMap<>();
        m.forEach((k, v) -> out.put(k, new TreeMap<>(v)));
        return out;
    }
}
