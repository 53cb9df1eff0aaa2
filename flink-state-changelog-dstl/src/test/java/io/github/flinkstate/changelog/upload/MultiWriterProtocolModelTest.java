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
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.LongStream;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.SnapshotResult;
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
 * The writer protocol model of {@link WriterProtocolModelTest}, for a whole job on one TaskManager:
 * several subtasks whose writers share one storage (so batches put several writers' change sets
 * into one file), job-wide checkpoints whose barriers reach the subtasks at different steps (so
 * writers can be a checkpoint apart), aborts with and without the JobManager having seen the
 * persist results (including resets while persists are still uploading), and failovers that close
 * writers mid-protocol and open new ones, restored from the retained checkpoint: as Flink's
 * changelog backend does, a restored subtask puts the restored (not materialized) log handles into
 * each of its checkpoints until it materializes; and upload faults: the DFS refuses creates or
 * breaks off writes, so that some batches need retries and some fail all their attempts (their
 * persists fail, and the JobManager aborts those checkpoints). Checked against a JobManager model:
 *
 * <ul>
 *   <li>no premature delete: the TaskManager never deletes a file of the retained checkpoint (its
 *       own handles and those it carries from a restore), and the retained checkpoint reads back
 *       exactly what each subtask appended in its range;
 *   <li>no leak: once everything is materialized and subsumed, and the JobManager deleted what it
 *       registered, no DSTL file is left, except files a closed writer had handed out in persist
 *       results that the JobManager never registered (checkpoints aborted before their
 *       acknowledgement arrived): a closing writer hands such files over rather than risk deleting
 *       one a restored job still reads (docs/changelog-dstl.md, "Deletion rules").
 * </ul>
 */
class MultiWriterProtocolModelTest {

    private static final InjectingFileSystem FS = InjectingFileSystem.shared();

    private static final Logger LOG = LoggerFactory.getLogger(MultiWriterProtocolModelTest.class);
    private static final int SUBTASKS = 3;
    private static final AtomicInteger RUNS = new AtomicInteger();

    @TempDir File tmp;

    private DfsBatchedChangelogStorage storage;

    @BeforeEach
    void resetFaults() {
        FS.reset();
    }

    @AfterEach
    void close() throws Exception {
        if (storage != null) {
            TestStorages.closeAndAwait(storage);
        }
        FS.reset();
    }

    /** Backend-side state of one subtask (ChangelogKeyedStateBackend + its truncate helper). */
    private final class Subtask {
        final KeyGroupRange range;
        DfsChangelogWriter writer;
        final Map<Long, List<String>> valuesBySqn = new HashMap<>();
        final List<String> active = new ArrayList<>();
        final TreeMap<Long, SequenceNumber> checkpointedUpTo = new TreeMap<>();
        SequenceNumber materializedTo;
        SequenceNumber subsumedUpTo;
        SequenceNumber materializedUpTo;
        SequenceNumber lastUploadedTo;
        long lastCheckpointId = -1;
        int generation;

        /** Restored log handles this subtask's checkpoints carry until it materializes. */
        List<Part> restored = List.of();

        /** Parts of this writer's persists, for the files it may hand over when it closes. */
        final List<Part> parts = new ArrayList<>();

        Subtask(int index) {
            this.range = KeyGroupRange.of(index * 4, index * 4 + 3);
        }

        /**
         * A new writer after a (re)start, restored from {@code from}'s part of this subtask (null:
         * nothing): the restored log is not this writer's, but its checkpoints carry it.
         */
        void start(Part from) {
            restored = List.of();
            if (from != null) {
                List<Part> carried = new ArrayList<>(from.carried);
                carried.add(from);
                restored = carried;
            }
            parts.clear();
            generation++;
            writer = storage.createWriter("op-" + range.getStartKeyGroup(), range, null);
            valuesBySqn.clear();
            active.clear();
            checkpointedUpTo.clear();
            materializedTo = writer.initialSequenceNumber();
            lastUploadedTo = writer.initialSequenceNumber();
            subsumedUpTo = null;
            materializedUpTo = null;
            lastCheckpointId = -1;
        }

        void truncate() {
            if (subsumedUpTo != null && materializedUpTo != null) {
                writer.truncate(
                        subsumedUpTo.compareTo(materializedUpTo) < 0
                                ? subsumedUpTo
                                : materializedUpTo);
            }
        }

        SequenceNumber seal() {
            SequenceNumber next = writer.nextSequenceNumber();
            if (!active.isEmpty()) {
                long sqn = number(next) - 1;
                valuesBySqn.computeIfAbsent(sqn, k -> new ArrayList<>()).addAll(active);
                active.clear();
            }
            return next;
        }

        List<String> expected(SequenceNumber from, SequenceNumber to) {
            List<String> result = new ArrayList<>();
            for (long s = number(from); s < number(to); s++) {
                result.addAll(valuesBySqn.getOrDefault(s, List.of()));
            }
            return result;
        }
    }

    /** One subtask's share of a checkpoint. */
    private static final class Part {
        final Subtask subtask;
        final int generation;
        final SequenceNumber from;
        final SequenceNumber to;
        final List<String> expected;
        final CompletableFuture<SnapshotResult<ChangelogStateHandleStreamImpl>> future;

        /** Restored parts whose handles this part's checkpoint also references. */
        final List<Part> carried;

        ChangelogStateHandleStreamImpl handle;

        Part(
                Subtask subtask,
                SequenceNumber from,
                SequenceNumber to,
                CompletableFuture<SnapshotResult<ChangelogStateHandleStreamImpl>> future) {
            this.subtask = subtask;
            this.generation = subtask.generation;
            this.from = from;
            this.to = to;
            this.expected = subtask.expected(from, to);
            this.future = future;
            this.carried = subtask.restored;
            subtask.parts.add(this);
        }

        /** Files of this part's own handle and of the handles it carries. */
        Set<String> allFiles() {
            Set<String> all = new HashSet<>(files(handle));
            for (Part c : carried) {
                all.addAll(files(c.handle));
            }
            return all;
        }
    }

    /** A checkpoint as the JobManager sees it. */
    private static final class Checkpoint {
        final long id;
        final List<Part> parts = new ArrayList<>();

        /** Subtasks its barrier has not reached yet (they have not persisted for it). */
        final List<Subtask> waiting = new ArrayList<>();

        Checkpoint(long id) {
            this.id = id;
        }

        /**
         * Waits for every part; false if one failed (the checkpoint is then declined), counting the
         * failure in {@code failed}.
         */
        boolean acknowledge(Map<String, Long> registered, AtomicInteger failed) throws Exception {
            for (Part part : parts) {
                try {
                    part.handle = part.future.get(1, TimeUnit.MINUTES).getJobManagerOwnedSnapshot();
                } catch (java.util.concurrent.ExecutionException e) {
                    failed.incrementAndGet();
                    return false;
                }
            }
            for (Part part : parts) {
                for (String file : part.allFiles()) {
                    registered.merge(file, id, Math::max);
                    LOG.debug("JM registers {} for checkpoint {}", file, id);
                }
            }
            return true;
        }
    }

    /**
     * Seeds 1..30; {@code -DmodelSeed=N} runs only seed N and {@code -DmodelRuns=R} repeats the
     * chosen seed(s) R times in one JVM, to chase rare interleavings (e.g. {@code -DmodelSeed=4
     * -DmodelRuns=300}).
     */
    static LongStream seeds() {
        String seed = System.getProperty("modelSeed");
        int runs = Integer.getInteger("modelRuns", 1);
        LongStream seeds =
                seed == null || seed.isBlank()
                        ? LongStream.rangeClosed(1, 30)
                        : LongStream.of(Long.parseLong(seed.trim()));
        long[] chosen = seeds.toArray();
        return LongStream.range(0, (long) chosen.length * runs)
                .map(i -> chosen[(int) (i % chosen.length)]);
    }

    @ParameterizedTest(name = "seed={0}")
    @MethodSource("seeds")
    void randomJobProtocol_neitherDeletesEarlyNorLeaks(long seed) throws Exception {
        LOG.info("MultiWriterProtocolModelTest seed {} (run {})", seed, RUNS.incrementAndGet());
        Random random = new Random(seed);
        File dfs = new File(tmp, "dfs");
        Configuration config = TestStorages.config(FS.path(dfs));
        // a delay lets the persists of several writers share one batch, i.e. one file
        config.set(DfsChangelogOptions.PERSIST_DELAY, Duration.ofMillis(random.nextInt(4)));
        if (random.nextBoolean()) {
            config.set(DfsChangelogOptions.PREEMPTIVE_PERSIST_THRESHOLD, MemorySize.parse("24b"));
        }
        config.set(DfsChangelogOptions.RETRY_DELAY, Duration.ZERO);
        config.set(DfsChangelogOptions.MAX_ATTEMPTS, 2); // two injected faults fail a batch
        // a checkpoint's batch waits for its late subtasks at most this long (default 1 s: with
        // barriers that arrive steps later, or never, a seed took seconds)
        config.set(DfsChangelogOptions.CHECKPOINT_MAX_WAIT, Duration.ofMillis(random.nextInt(20)));
        storage = TestStorages.storage(config, new File(tmp, "local"));

        List<Subtask> subtasks = new ArrayList<>();
        for (int i = 0; i < SUBTASKS; i++) {
            Subtask subtask = new Subtask(i);
            subtask.start(null);
            subtasks.add(subtask);
        }
        Set<String> handedOverAtClose = new HashSet<>();
        TreeMap<Long, Checkpoint> pending = new TreeMap<>();
        Checkpoint retained = null;
        Map<String, Long> registered = new HashMap<>();
        long nextCheckpointId = 1;
        int value = 0;
        AtomicInteger failedCheckpoints = new AtomicInteger();

        for (int step = 0; step < 250; step++) {
            int op = random.nextInt(20);
            if (op < 8) { // append
                Subtask subtask = subtasks.get(random.nextInt(SUBTASKS));
                int n = 1 + random.nextInt(3);
                for (int i = 0; i < n; i++) {
                    int kg = subtask.range.getStartKeyGroup() + random.nextInt(4);
                    String v = "v" + value++;
                    subtask.writer.append(kg, bytes(v));
                    subtask.active.add(kg + ":" + v);
                }
            } else if (op < 10 && pending.size() < 2) { // trigger a job-wide checkpoint
                Checkpoint cp = new Checkpoint(nextCheckpointId++);
                cp.waiting.addAll(subtasks);
                pending.put(cp.id, cp);
                LOG.debug("model step {}: trigger checkpoint {}", step, cp.id);
                for (Subtask subtask : subtasks) {
                    if (random.nextBoolean()) { // else its barrier arrives at a later step
                        barrier(cp, subtask, pending);
                    }
                }
            } else if (op < 12 && !pending.isEmpty()) { // complete one pending checkpoint
                List<Long> ids = new ArrayList<>(pending.keySet());
                Checkpoint cp = pending.get(ids.get(random.nextInt(ids.size())));
                for (Subtask late : new ArrayList<>(cp.waiting)) {
                    barrier(cp, late, pending); // every subtask acknowledges before completion
                }
                pending.remove(cp.id);
                LOG.debug("model step {}: complete checkpoint {}", step, cp.id);
                if (!cp.acknowledge(registered, failedCheckpoints)) {
                    abort(cp, subtasks);
                    continue;
                }
                for (Long older : new ArrayList<>(pending.headMap(cp.id).keySet())) {
                    Checkpoint aborted = pending.remove(older);
                    LOG.debug("model step {}: abort older checkpoint {}", step, aborted.id);
                    if (random.nextBoolean()) {
                        aborted.acknowledge(
                                registered, failedCheckpoints); // acks arrived before the abort
                    }
                    abort(aborted, subtasks);
                }
                Checkpoint previous = retained;
                retained = cp;
                for (Subtask subtask : subtasks) {
                    if (subtask.lastCheckpointId == cp.id) {
                        Part part = partOf(cp, subtask);
                        subtask.writer.confirm(part.from, part.to, cp.id);
                    }
                }
                jmDeleteUnused(registered, retained);
                if (previous != null) { // notifyCheckpointSubsumed
                    for (Subtask subtask : subtasks) {
                        SequenceNumber sqn = subtask.checkpointedUpTo.get(previous.id);
                        if (sqn != null) {
                            subtask.subsumedUpTo = sqn;
                            subtask.checkpointedUpTo.headMap(previous.id, true).clear();
                            subtask.truncate();
                        }
                    }
                }
            } else if (op < 14 && !pending.isEmpty()) { // abort the newest pending checkpoint
                Checkpoint aborted = pending.remove(pending.lastKey());
                LOG.debug("model step {}: abort newest checkpoint {}", step, aborted.id);
                if (random.nextBoolean()) {
                    aborted.acknowledge(registered, failedCheckpoints);
                } // else: declined, its persists may still be uploading at the reset
                abort(aborted, subtasks);
            } else if (op < 17) { // materialization of one subtask
                Subtask subtask = subtasks.get(random.nextInt(SUBTASKS));
                SequenceNumber upTo = subtask.seal();
                subtask.materializedTo = upTo;
                subtask.materializedUpTo = upTo;
                subtask.restored = List.of(); // the materialized state holds the restored log
                LOG.debug("model step {}: materialize {} up to {}", step, subtask.range, upTo);
                subtask.truncate();
            } else if (op == 17) { // failover: tasks fail, pending checkpoints are discarded
                LOG.debug("model step {}: failover", step);
                pending.clear();
                for (Subtask subtask : subtasks) {
                    if (random.nextBoolean() || subtask == subtasks.get(0)) {
                        subtask.writer.truncateAndClose(subtask.lastUploadedTo);
                        // handed out; also those reset since: an aborted checkpoint's file
                        // stays in doubt until it is subsumed, and a closing writer hands it over.
                        // A result an upload thread built before the close but completes after it
                        // was handed out too: wait for each (a part the close failed completes
                        // exceptionally and handed nothing out)
                        for (Part part : subtask.parts) {
                            try {
                                handedOverAtClose.addAll(
                                        files(
                                                part.future
                                                        .get(1, TimeUnit.MINUTES)
                                                        .getJobManagerOwnedSnapshot()));
                            } catch (ExecutionException | CancellationException failed) {
                                // failed, or reset by the close: nothing handed out
                            }
                        }
                        subtask.start(retained == null ? null : partOf(retained, subtask));
                    }
                }
            } else if (op == 19) { // a late barrier reaches one subtask
                for (Checkpoint cp : pending.values()) {
                    if (!cp.waiting.isEmpty()) {
                        Subtask late = cp.waiting.get(random.nextInt(cp.waiting.size()));
                        LOG.debug("model step {}: late barrier {} at {}", step, cp.id, late.range);
                        barrier(cp, late, pending);
                        break;
                    }
                }
            } else if (op == 18) { // upload faults: retried, or failing a batch's every attempt
                int n = 1 + random.nextInt(3);
                if (random.nextBoolean()) {
                    FS.failNextCreates(n);
                } else {
                    FS.failNextWrites(n, random.nextInt(64)); // partial files left to delete
                }
                LOG.debug("model step {}: the next {} uploads fail", step, n);
            }
            for (Subtask subtask : subtasks) {
                subtask.writer.checkInvariants();
            }
            storage.getRegistry().checkInvariants();
            checkRetained(retained, seed);
        }

        // drain: abort pending, materialize everything, complete an empty checkpoint
        LOG.debug("model: drain");
        FS.heal(); // faults not used up yet would fail the last checkpoint
        for (Checkpoint aborted : pending.values()) {
            abort(aborted, subtasks);
        }
        Checkpoint last = new Checkpoint(nextCheckpointId);
        for (Subtask subtask : subtasks) {
            SequenceNumber end = subtask.seal();
            subtask.materializedTo = end;
            subtask.materializedUpTo = end;
            subtask.restored = List.of();
            subtask.lastCheckpointId = last.id;
            last.parts.add(new Part(subtask, end, end, subtask.writer.persist(end, last.id)));
        }
        assertThat(last.acknowledge(registered, failedCheckpoints)).isTrue();
        retained = last;
        for (Subtask subtask : subtasks) {
            Part part = partOf(last, subtask);
            subtask.writer.confirm(part.from, part.to, last.id);
            subtask.writer.truncate(part.to);
            subtask.writer.checkInvariants();
        }
        checkRetained(retained, seed);
        jmDeleteUnused(registered, retained);
        assertThat(storage.getRegistry().referencesInDoubt()).isZero();
        for (Subtask subtask : subtasks) {
            subtask.writer.close();
        }
        TestStorages.closeAndAwait(
                storage); // the uploads and deletions end before the files are listed
        storage = null;
        // those the JobManager registered it deleted above; the others nobody deletes (see the
        // class comment)
        handedOverAtClose.removeAll(registered.keySet());
        TestStorages.waitUntil(
                () -> handedOverAtClose.containsAll(collectFiles(dfs)),
                "no DSTL file left but those handed over at close (seed "
                        + seed
                        + "): "
                        + collectFiles(dfs));
        LOG.info(
                "seed {}: {} checkpoint(s) failed by upload faults; {} file(s) of unregistered"
                        + " checkpoints handed over at close left",
                seed,
                failedCheckpoints.get(),
                collectFiles(dfs).size());
    }

    /**
     * The barrier of {@code cp} reaches {@code subtask}, which persists for it: after the barriers
     * of older pending checkpoints it has not seen yet (barriers arrive in order), so subtasks can
     * be a checkpoint apart, and one batch may hold one writer's change sets for checkpoint N and
     * another's for N + 1.
     */
    private static void barrier(Checkpoint cp, Subtask subtask, TreeMap<Long, Checkpoint> pending)
            throws java.io.IOException {
        for (Checkpoint older : pending.headMap(cp.id).values()) {
            if (older.waiting.contains(subtask)) {
                persistFor(older, subtask);
            }
        }
        if (cp.waiting.contains(subtask)) {
            persistFor(cp, subtask);
        }
    }

    private static void persistFor(Checkpoint cp, Subtask subtask) throws java.io.IOException {
        cp.waiting.remove(subtask);
        SequenceNumber to = subtask.seal();
        subtask.lastCheckpointId = cp.id;
        subtask.lastUploadedTo = to;
        subtask.checkpointedUpTo.put(cp.id, to);
        cp.parts.add(
                new Part(
                        subtask,
                        subtask.materializedTo,
                        to,
                        subtask.writer.persist(subtask.materializedTo, cp.id)));
    }

    private static void abort(Checkpoint aborted, List<Subtask> subtasks) {
        aborted.waiting.clear(); // a barrier that arrives after the abort is skipped
        for (Part part : aborted.parts) {
            Subtask subtask = part.subtask;
            if (part.generation == subtask.generation && subtask.lastCheckpointId == aborted.id) {
                subtask.writer.reset(part.from, part.to, aborted.id);
            }
        }
    }

    private static Part partOf(Checkpoint cp, Subtask subtask) {
        for (Part part : cp.parts) {
            if (part.subtask == subtask) {
                return part;
            }
        }
        throw new IllegalStateException("no part of " + subtask.range + " in " + cp.id);
    }

    private void checkRetained(Checkpoint retained, long seed) throws Exception {
        if (retained == null) {
            return;
        }
        for (Part part : retained.parts) {
            for (String file : part.allFiles()) {
                assertThat(FS.counters().paths(FsOp.DELETE))
                        .as("file of retained checkpoint %s deleted (seed %s)", retained.id, seed)
                        .doesNotContain(file);
            }
            List<Part> own = new ArrayList<>(part.carried);
            own.add(part);
            for (Part p : own) {
                if (p.handle == null) { // an empty persist result
                    assertThat(p.expected).isEmpty();
                    continue;
                }
                assertThat(Changes.perKeyGroup(Changes.read(storage.createReader(), p.handle)))
                        .as(
                                "retained checkpoint %s, %s, log of checkpoint part %s (seed %s)",
                                retained.id,
                                part.subtask.range,
                                p == part ? "own" : "restored",
                                seed)
                        .isEqualTo(Changes.perKeyGroup(p.expected));
            }
        }
    }

    private static void jmDeleteUnused(Map<String, Long> registered, Checkpoint retained) {
        Set<String> used = new HashSet<>();
        for (Part part : retained.parts) {
            used.addAll(part.allFiles());
        }
        registered
                .entrySet()
                .removeIf(
                        e -> {
                            if (!used.contains(e.getKey()) && e.getValue() < retained.id) {
                                new File(e.getKey()).delete(); // the JM
                                LOG.debug("JM deletes {}", e.getKey());
                                return true;
                            }
                            return false;
                        });
    }

    private static Set<String> files(ChangelogStateHandleStreamImpl handle) {
        Set<String> result = new HashSet<>();
        if (handle != null) {
            for (var t : handle.getHandlesAndOffsets()) {
                result.add(((FileStateHandle) t.f0).getFilePath().toUri().getPath());
            }
        }
        return result;
    }

    private static List<String> collectFiles(File dir) {
        List<String> out = new ArrayList<>();
        File[] children = dir.listFiles();
        if (children != null) {
            for (File child : children) {
                if (child.isDirectory()) {
                    out.addAll(collectFiles(child));
                } else {
                    out.add(child.getPath());
                }
            }
        }
        return out;
    }

    private static long number(SequenceNumber sqn) {
        return ((SequenceNumber.GenericSequenceNumber) sqn).number;
    }
}
