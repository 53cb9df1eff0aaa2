package io.github.flinkstate.changelog.upload;

import static io.github.flinkstate.changelog.testutils.Changes.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.changelog.DfsBatchedChangelogStorage;
import io.github.flinkstate.changelog.DfsChangelogOptions;
import io.github.flinkstate.changelog.testutils.Changes;
import io.github.flinkstate.changelog.testutils.TestStorages;
import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.changelog.ChangelogStateHandleStreamImpl;
import org.apache.flink.runtime.state.changelog.SequenceNumber;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Seeded random runs of the protocol Flink's {@code ChangelogKeyedStateBackend} and the JobManager
 * drive a writer with (appends, overlapping checkpoints, completions that subsume and abort older
 * pending ones, aborts, late notifications, materialization and truncation), checked against a
 * model of the JobManager's shared state registry:
 *
 * <ul>
 *   <li>no premature delete: the TaskManager never deletes a file the retained checkpoint uses, and
 *       the retained checkpoint always reads back exactly the changes it covers;
 *   <li>no leak: after everything is materialized and subsumed, and the JobManager deleted what it
 *       registered, no DSTL file is left.
 * </ul>
 */
class WriterProtocolModelTest {

    private static final InjectingFileSystem FS = InjectingFileSystem.shared();

    private static final Logger LOG = LoggerFactory.getLogger(WriterProtocolModelTest.class);
    private static final KeyGroupRange RANGE = KeyGroupRange.of(0, 7);

    @TempDir File tmp;

    private DfsBatchedChangelogStorage storage;

    @BeforeEach
    void reset() {
        FS.reset();
    }

    @AfterEach
    void close() throws Exception {
        if (storage != null) {
            TestStorages.closeAndAwait(storage);
        }
        FS.reset();
    }

    /** One checkpoint as seen by the backend and the JobManager. */
    private static final class Checkpoint {
        final long id;
        final SequenceNumber from;
        final SequenceNumber to;
        final List<String> expected;
        java.util.concurrent.CompletableFuture<
                        org.apache.flink.runtime.state.SnapshotResult<
                                ChangelogStateHandleStreamImpl>>
                future;
        ChangelogStateHandleStreamImpl handle;

        /** Waits for the persist result; its acknowledgement registers the files at the JM. */
        void acknowledge(Map<String, Long> registered) throws Exception {
            if (handle == null && future != null) {
                handle = future.get().getJobManagerOwnedSnapshot();
                for (String file : files(handle)) {
                    registered.merge(file, id, Math::max);
                }
            }
        }

        Checkpoint(long id, SequenceNumber from, SequenceNumber to, List<String> expected) {
            this.id = id;
            this.from = from;
            this.to = to;
            this.expected = expected;
        }
    }

    static java.util.stream.LongStream seeds() {
        return java.util.stream.LongStream.rangeClosed(1, 40);
    }

    @ParameterizedTest(name = "seed={0}")
    @MethodSource("seeds")
    void randomProtocol_neitherDeletesEarlyNorLeaks(long seed) throws Exception {
        LOG.info("WriterProtocolModelTest seed {}", seed);
        Random random = new Random(seed);
        Configuration config = TestStorages.config(FS.path(new File(tmp, "dfs")));
        if (random.nextBoolean()) {
            config.set(DfsChangelogOptions.PREEMPTIVE_PERSIST_THRESHOLD, MemorySize.parse("24b"));
        }
        if (random.nextBoolean()) {
            config.set(DfsChangelogOptions.PERSIST_DELAY, Duration.ofMillis(1));
        }
        config.set(DfsChangelogOptions.RETRY_DELAY, Duration.ZERO);
        storage = TestStorages.storage(config, new File(tmp, "local"));
        DfsChangelogWriter writer = storage.createWriter("op", RANGE, null);

        // backend state (ChangelogKeyedStateBackend + ChangelogTruncateHelper)
        TreeMap<Long, String> changesBySqn = new TreeMap<>(); // sqn -> appended values, in order
        List<String> active = new ArrayList<>();
        SequenceNumber materializedTo = writer.initialSequenceNumber();
        long lastCheckpointId = -1;
        TreeMap<Long, SequenceNumber> checkpointedUpTo = new TreeMap<>();
        SequenceNumber subsumedUpTo = null;
        SequenceNumber materializedUpTo = null;

        // JobManager state
        TreeMap<Long, Checkpoint> pending = new TreeMap<>();
        Checkpoint retained = null;
        Map<String, Long> registered = new HashMap<>(); // path -> last checkpoint using it
        long nextCheckpointId = 1;
        int value = 0;
        Map<Long, List<String>> valuesBySqn = new HashMap<>();

        for (int step = 0; step < 300; step++) {
            int op = random.nextInt(10);
            if (op <= 3) { // append
                int n = 1 + random.nextInt(3);
                for (int i = 0; i < n; i++) {
                    int kg = random.nextInt(8);
                    String v = "v" + value++;
                    writer.append(kg, bytes(v));
                    active.add(kg + ":" + v);
                }
            } else if (op == 4 && pending.size() < 2) { // trigger a checkpoint
                SequenceNumber to = writer.nextSequenceNumber();
                seal(valuesBySqn, active, to);
                long id = nextCheckpointId++;
                lastCheckpointId = id;
                checkpointedUpTo.put(id, to);
                Checkpoint cp =
                        new Checkpoint(
                                id, materializedTo, to, expected(valuesBySqn, materializedTo, to));
                // the persist may still be running while other operations happen
                cp.future = writer.persist(materializedTo, id);
                pending.put(id, cp);
            } else if (op == 5 && !pending.isEmpty()) { // complete one pending checkpoint
                List<Long> ids = new ArrayList<>(pending.keySet());
                Checkpoint cp = pending.remove(ids.get(random.nextInt(ids.size())));
                cp.acknowledge(registered);
                // pending checkpoints older than the completed one are aborted
                for (Long older : new ArrayList<>(pending.headMap(cp.id).keySet())) {
                    Checkpoint aborted = pending.remove(older);
                    aborted.acknowledge(registered);
                    if (lastCheckpointId == aborted.id) {
                        writer.reset(aborted.from, aborted.to, aborted.id);
                    }
                }
                Checkpoint previous = retained;
                retained = cp;
                if (lastCheckpointId == cp.id) {
                    writer.confirm(cp.from, cp.to, cp.id);
                }
                // the JobManager deletes registered files the retained checkpoint does not use
                jmDeleteUnused(registered, retained);
                if (previous != null) { // notifyCheckpointSubsumed
                    SequenceNumber sqn = checkpointedUpTo.get(previous.id);
                    if (sqn != null) {
                        subsumedUpTo = sqn;
                        checkpointedUpTo.headMap(previous.id, true).clear();
                        truncate(writer, subsumedUpTo, materializedUpTo);
                    }
                }
            } else if (op == 6 && !pending.isEmpty()) { // abort the newest pending checkpoint
                Checkpoint aborted = pending.remove(pending.lastKey());
                aborted.acknowledge(registered);
                if (lastCheckpointId == aborted.id) {
                    writer.reset(aborted.from, aborted.to, aborted.id);
                }
            } else if (op == 7) { // materialization
                SequenceNumber upTo = writer.nextSequenceNumber();
                seal(valuesBySqn, active, upTo);
                materializedTo = upTo;
                materializedUpTo = upTo;
                truncate(writer, subsumedUpTo, materializedUpTo);
            }
            writer.checkInvariants();
            storage.getRegistry().checkInvariants();
            checkRetained(retained);
        }

        // drain: abort pending, materialize everything, complete an empty checkpoint
        for (Checkpoint aborted : pending.values()) {
            aborted.acknowledge(registered);
            if (lastCheckpointId == aborted.id) {
                writer.reset(aborted.from, aborted.to, aborted.id);
            }
        }
        SequenceNumber end = writer.nextSequenceNumber();
        seal(valuesBySqn, active, end);
        materializedUpTo = end;
        long finalId = nextCheckpointId;
        Checkpoint last = new Checkpoint(finalId, end, end, List.of());
        last.handle = writer.persist(end, finalId).get().getJobManagerOwnedSnapshot();
        checkpointedUpTo.put(finalId, end);
        writer.confirm(end, end, finalId);
        // the empty checkpoint subsumes the last real one; everything is materialized
        truncate(writer, end, materializedUpTo);
        retained = last;
        checkRetained(retained);
        jmDeleteUnused(registered, retained);
        writer.checkInvariants();
        writer.close();
        TestStorages.closeAndAwait(
                storage); // the uploads and deletions end before the files are listed
        storage = null;
        File dir = new File(tmp, "dfs");
        // close() does not wait for scheduled deletions
        TestStorages.waitUntil(
                () -> {
                    List<String> left = new ArrayList<>();
                    collectFiles(dir, left);
                    return left.isEmpty();
                },
                "no leaked DSTL file (seed " + seed + ")");
    }

    private static void seal(
            Map<Long, List<String>> valuesBySqn, List<String> active, SequenceNumber next) {
        if (!active.isEmpty()) {
            long sqn = ((SequenceNumber.GenericSequenceNumber) next).number - 1;
            valuesBySqn.computeIfAbsent(sqn, k -> new ArrayList<>()).addAll(active);
            active.clear();
        }
    }

    private static List<String> expected(
            Map<Long, List<String>> valuesBySqn, SequenceNumber from, SequenceNumber to) {
        long a = ((SequenceNumber.GenericSequenceNumber) from).number;
        long b = ((SequenceNumber.GenericSequenceNumber) to).number;
        List<String> result = new ArrayList<>();
        for (long s = a; s < b; s++) {
            result.addAll(valuesBySqn.getOrDefault(s, List.of()));
        }
        return result;
    }

    private static void truncate(
            DfsChangelogWriter writer,
            SequenceNumber subsumedUpTo,
            SequenceNumber materializedUpTo) {
        if (subsumedUpTo != null && materializedUpTo != null) {
            writer.truncate(
                    subsumedUpTo.compareTo(materializedUpTo) < 0 ? subsumedUpTo : materializedUpTo);
        }
    }

    private void checkRetained(Checkpoint retained) throws Exception {
        if (retained == null || retained.handle == null) {
            return;
        }
        for (String file : files(retained.handle)) {
            assertThat(FS.counters().paths(FsOp.DELETE))
                    .as("file of retained checkpoint %s deleted", retained.id)
                    .doesNotContain(file);
        }
        assertThat(Changes.perKeyGroup(Changes.read(storage.createReader(), retained.handle)))
                .isEqualTo(Changes.perKeyGroup(retained.expected));
    }

    private static void jmDeleteUnused(Map<String, Long> registered, Checkpoint retained) {
        Set<String> used =
                retained.handle == null ? Set.of() : new HashSet<>(files(retained.handle));
        registered
                .entrySet()
                .removeIf(
                        e -> {
                            if (!used.contains(e.getKey()) && e.getValue() < retained.id) {
                                new File(e.getKey())
                                        .delete(); // the JM deletes directly, not logged
                                return true;
                            }
                            return false;
                        });
    }

    private static Set<String> files(ChangelogStateHandleStreamImpl handle) {
        Set<String> result = new HashSet<>();
        if (handle != null) {
            for (var t : handle.getHandlesAndOffsets()) {
                StreamStateHandle h = t.f0;
                result.add(((FileStateHandle) h).getFilePath().toUri().getPath());
            }
        }
        return result;
    }

    private static void collectFiles(File dir, List<String> out) {
        File[] children = dir.listFiles();
        if (children == null) {
            return;
        }
        for (File child : children) {
            if (child.isDirectory()) {
                collectFiles(child, out);
            } else {
                out.add(child.getPath());
            }
        }
    }
}
