package io.github.flinkstate.changelog.upload;

import static io.github.flinkstate.changelog.testutils.Changes.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.changelog.DfsBatchedChangelogStorage;
import io.github.flinkstate.changelog.DfsBatchedChangelogStorageFactory;
import io.github.flinkstate.changelog.DfsChangelogOptions;
import io.github.flinkstate.changelog.testutils.Changes;
import io.github.flinkstate.changelog.testutils.TestStorages;
import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.changelog.ChangelogStateHandleStreamImpl;
import org.apache.flink.runtime.state.changelog.SequenceNumber;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bookkeeping of {@link DfsChangelogWriter}: sequence numbers, reuse of uploads, and which files
 * truncate / confirm / reset / truncateAndClose delete (no leak, no premature delete). Runs on the
 * local file system; invariants are checked after every test.
 */
class DfsChangelogWriterTest {

    private static final KeyGroupRange RANGE = KeyGroupRange.of(0, 9);

    @TempDir File tmp;

    private DfsBatchedChangelogStorage storage;
    private final List<DfsChangelogWriter> writers = new ArrayList<>();

    private DfsBatchedChangelogStorage open(Configuration config) throws Exception {
        // the tests count files: no adaptive hedge (after 50-250 ms of a slow local write) may add
        // an attempt's file; hedging after upload.timeout (1 s) stays
        config.set(DfsChangelogOptions.UPLOAD_HEDGE_ADAPTIVE, false);
        storage = TestStorages.storage(config, new File(tmp, "local"));
        return storage;
    }

    private DfsBatchedChangelogStorage open() throws Exception {
        return open(TestStorages.config(new Path(new File(tmp, "dfs").toURI())));
    }

    private DfsChangelogWriter writer() {
        DfsChangelogWriter writer = storage.createWriter("op", RANGE, null);
        writers.add(writer);
        return writer;
    }

    @AfterEach
    void checkAndClose() throws Exception {
        for (DfsChangelogWriter writer : writers) {
            writer.checkInvariants();
        }
        if (storage != null) {
            storage.getRegistry().checkInvariants();
            TestStorages.closeAndAwait(storage);
        }
    }

    private static ChangelogStateHandleStreamImpl persist(
            DfsChangelogWriter writer, long from, long checkpointId) throws Exception {
        return writer.persist(SequenceNumber.of(from), checkpointId)
                .get()
                .getJobManagerOwnedSnapshot();
    }

    private static Set<StreamStateHandle> files(ChangelogStateHandleStreamImpl handle) {
        return handle.getHandlesAndOffsets().stream()
                .map(t -> t.f0)
                .collect(Collectors.toCollection(LinkedHashSet::new));
    }

    private static boolean exists(StreamStateHandle handle) {
        return new File(
                        ((org.apache.flink.runtime.state.filesystem.FileStateHandle) handle)
                                .getFilePath()
                                .toUri()
                                .getPath())
                .exists();
    }

    private void awaitDeleted(StreamStateHandle file) throws Exception {
        TestStorages.waitUntil(() -> !exists(file), "file deleted: " + file);
    }

    @Test
    void persist_returnsHandleThatReadsBack_metadataFirst_thenByKeyGroupInAppendOrder()
            throws Exception {
        open();
        DfsChangelogWriter writer = writer();
        writer.appendMeta(bytes("meta"));
        writer.append(1, bytes("a"));
        writer.append(2, bytes("b"));
        assertThat(writer.nextSequenceNumber()).isEqualTo(SequenceNumber.of(1));
        writer.append(1, bytes("c"));

        ChangelogStateHandleStreamImpl handle = persist(writer, 0, 1);

        assertThat(handle.getStorageIdentifier())
                .isEqualTo(DfsBatchedChangelogStorageFactory.IDENTIFIER);
        assertThat(handle.getKeyGroupRange()).isEqualTo(RANGE);
        assertThat(handle.getHandlesAndOffsets()).hasSize(2);
        assertThat(handle.getStateSize()).isPositive();
        // two change sets (segments), merged by key group on read: 1:c (second set) before 2:b
        assertThat(Changes.read(storage.createReader(), handle))
                .containsExactly("-1:meta", "1:a", "1:c", "2:b");
    }

    @Test
    void emptyPersist_returnsEmptyResult() throws Exception {
        open();
        SnapshotResult<ChangelogStateHandleStreamImpl> result =
                writer().persist(SequenceNumber.of(0), 1).get();
        assertThat(result.getJobManagerOwnedSnapshot()).isNull();
    }

    @Test
    void secondPersist_reusesEarlierUpload_andReportsOnlyNewBytesAsIncremental() throws Exception {
        open();
        DfsChangelogWriter writer = writer();
        writer.append(1, bytes("a"));
        ChangelogStateHandleStreamImpl first = persist(writer, 0, 1);
        writer.append(2, bytes("b"));
        ChangelogStateHandleStreamImpl second = persist(writer, 0, 2);

        assertThat(second.getHandlesAndOffsets().get(0))
                .isEqualTo(first.getHandlesAndOffsets().get(0));
        assertThat(files(second)).hasSize(2);
        assertThat(second.getCheckpointedSize()).isLessThan(second.getStateSize());
        assertThat(Changes.read(storage.createReader(), second)).containsExactly("1:a", "2:b");
        assertThat(TestStorages.files(storage)).hasSize(2);
    }

    @Test
    void truncate_ofUploadAPersistHandedOut_keepsItsFile_whileItsCheckpointMayBeRetained()
            throws Exception {
        // Flink skips confirm when the next checkpoint started before the completion
        // notification; that checkpoint may be the retained one, so the file must survive
        open();
        DfsChangelogWriter writer = writer();
        writer.append(1, bytes("a"));
        StreamStateHandle file = files(persist(writer, 0, 1)).iterator().next();
        writer.truncate(writer.nextSequenceNumber());
        assertThat(storage.getRegistry().referencesInDoubt()).isOne();
        storage.close();
        assertThat(exists(file)).isTrue();
        assertThat(writer.retainedChangeSets()).isZero();
        storage = null;
    }

    @Test
    void truncate_ofConfirmedUpload_keepsFile_forTheJobManager() throws Exception {
        open();
        DfsChangelogWriter writer = writer();
        writer.append(1, bytes("a"));
        StreamStateHandle file = files(persist(writer, 0, 1)).iterator().next();
        SequenceNumber to = writer.nextSequenceNumber();
        writer.confirm(SequenceNumber.of(0), to, 1);
        writer.truncate(to);
        storage.close();
        assertThat(exists(file)).isTrue();
        assertThat(storage.getRegistry().deletedFiles()).isZero();
        storage = null;
    }

    @Test
    void truncate_keepsChangeSetsAtOrAboveTheBound() throws Exception {
        open();
        DfsChangelogWriter writer = writer();
        writer.append(1, bytes("a"));
        SequenceNumber mid = writer.nextSequenceNumber();
        writer.append(1, bytes("b"));
        ChangelogStateHandleStreamImpl all = persist(writer, 0, 1);
        writer.truncate(mid);
        ChangelogStateHandleStreamImpl tail = persist(writer, 0, 2);
        assertThat(Changes.read(storage.createReader(), tail)).containsExactly("1:b");
        assertThat(exists(all.getHandlesAndOffsets().get(1).f0)).isTrue();
    }

    /**
     * An abort does not prove that the JobManager dropped the checkpoint: with a highly available
     * checkpoint store whose write failed in doubt ("possibly inconsistent"), Flink aborts the
     * checkpoint on the tasks but keeps it, and a JobManager failover may restore it. Its file is
     * kept until that checkpoint is subsumed; the change set is uploaded again meanwhile.
     */
    @Test
    void reset_ofAbortedCheckpoint_reuploads_andKeepsTheOldFileUntilTheCheckpointIsSubsumed()
            throws Exception {
        open(); // num-retained 1
        DfsChangelogWriter writer = writer();
        writer.append(1, bytes("a"));
        StreamStateHandle old = files(persist(writer, 0, 1)).iterator().next();
        SequenceNumber to = writer.nextSequenceNumber();
        writer.reset(SequenceNumber.of(0), to, 1);
        assertThat(storage.getRegistry().isTracked(old)).as("kept after the abort").isTrue();
        assertThat(storage.getRegistry().referencesInDoubt()).isEqualTo(1);

        ChangelogStateHandleStreamImpl again = persist(writer, 0, 2);
        assertThat(files(again)).doesNotContain(old);
        assertThat(Changes.read(storage.createReader(), again)).containsExactly("1:a");
        assertThat(exists(old)).as("before checkpoint 1 is subsumed").isTrue();

        writer.confirm(SequenceNumber.of(0), to, 2); // checkpoint 1 can no longer be retained
        awaitDeleted(old);
        assertThat(files(again)).allMatch(DfsChangelogWriterTest::exists);
    }

    /**
     * A writer that closes after a run of aborts hands over the file of its newest aborted
     * checkpoint only (the one a JobManager could still restore) and deletes the older ones, which
     * no JobManager restores: a copy of the log per abort stayed behind otherwise.
     */
    @Test
    void closingAfterARunOfAborts_handsOverTheNewestAbortedCheckpointsFileOnly() throws Exception {
        open(); // num-retained 1
        DfsChangelogWriter writer = writer();
        writer.append(1, bytes("a"));
        StreamStateHandle first = files(persist(writer, 0, 1)).iterator().next();
        writer.reset(SequenceNumber.of(0), writer.nextSequenceNumber(), 1);
        writer.append(2, bytes("b"));
        Set<StreamStateHandle> second = files(persist(writer, 0, 2)); // "a" uploaded again
        assertThat(second).doesNotContain(first);
        writer.reset(SequenceNumber.of(0), writer.nextSequenceNumber(), 2);

        writer.close();
        awaitDeleted(first);
        assertThat(second).allMatch(DfsChangelogWriterTest::exists);
        assertThat(second).noneMatch(f -> storage.getRegistry().isTracked(f)); // handed over
        assertThat(storage.getRegistry().referencesInDoubt()).isZero();
    }

    @Test
    void reset_keepsUploadTheJobManagerNeverSaw() throws Exception {
        Configuration config = TestStorages.config(new Path(new File(tmp, "dfs").toURI()));
        config.set(DfsChangelogOptions.PREEMPTIVE_PERSIST_THRESHOLD, MemorySize.parse("4b"));
        open(config);
        DfsChangelogWriter writer = writer();
        writer.append(1, bytes("0123456789")); // pre-emptive upload, in no persist result yet
        TestStorages.waitUntil(
                () -> storage.getRegistry().trackedFiles() == 1, "pre-emptive upload done");
        List<String> before = TestStorages.files(storage);
        writer.reset(SequenceNumber.of(0), writer.nextSequenceNumber(), 1);
        ChangelogStateHandleStreamImpl handle = persist(writer, 0, 2);
        assertThat(TestStorages.files(storage)).isEqualTo(before);
        assertThat(Changes.read(storage.createReader(), handle)).containsExactly("1:0123456789");
    }

    @Test
    void reset_keepsFileThatAnEarlierCheckpointUsed() throws Exception {
        open();
        DfsChangelogWriter writer = writer();
        writer.append(1, bytes("a"));
        StreamStateHandle file = files(persist(writer, 0, 1)).iterator().next();
        persist(writer, 0, 2); // reuses the same upload
        writer.reset(SequenceNumber.of(0), writer.nextSequenceNumber(), 2);
        writer.truncate(writer.nextSequenceNumber());
        storage.close();
        assertThat(exists(file)).isTrue();
        storage = null;
    }

    @Test
    void filesOfEarlierPersists_areKeptUntilNumRetainedLaterCheckpointsConfirmed()
            throws Exception {
        Configuration config = TestStorages.config(new Path(new File(tmp, "dfs").toURI()));
        config.set(CheckpointingOptions.MAX_RETAINED_CHECKPOINTS, 2);
        open(config);
        DfsChangelogWriter writer = writer();
        writer.append(1, bytes("a"));
        StreamStateHandle first = files(persist(writer, 0, 1)).iterator().next();
        SequenceNumber materializedTo = writer.nextSequenceNumber();
        writer.append(1, bytes("b"));
        persist(writer, 1, 2); // materialization moved the start to sqn 1
        // checkpoint 1's notification was skipped (checkpoint 2 already started); with two
        // retained checkpoints, checkpoint 1 is still retained after 2 completed
        writer.confirm(materializedTo, writer.nextSequenceNumber(), 2);
        writer.truncate(materializedTo);
        assertThat(exists(first)).isTrue();
        assertThat(storage.getRegistry().referencesInDoubt()).isOne();

        writer.append(1, bytes("c"));
        SequenceNumber to = writer.nextSequenceNumber();
        persist(writer, 1, 3);
        writer.confirm(materializedTo, to, 3); // now checkpoint 1 is subsumed for sure
        awaitDeleted(first);
        assertThat(storage.getRegistry().referencesInDoubt()).isZero();
    }

    @Test
    void persistsOfManyWriters_shareOneFile() throws Exception {
        Configuration config = TestStorages.config(new Path(new File(tmp, "dfs").toURI()));
        config.set(DfsChangelogOptions.PERSIST_DELAY, Duration.ofHours(1));
        config.set(DfsChangelogOptions.PERSIST_SIZE_THRESHOLD, MemorySize.parse("20b"));
        open(config);
        DfsChangelogWriter w1 = writer();
        DfsChangelogWriter w2 = writer();
        w1.append(1, bytes("0123456789"));
        w2.append(2, bytes("abcdefghij"));
        CompletableFuture<SnapshotResult<ChangelogStateHandleStreamImpl>> f1 =
                w1.persist(SequenceNumber.of(0), 1);
        assertThat(f1).isNotDone(); // 10 bytes < 20 bytes, and the delay is an hour
        ChangelogStateHandleStreamImpl h2 = persist(w2, 0, 1);
        ChangelogStateHandleStreamImpl h1 = f1.get().getJobManagerOwnedSnapshot();

        StreamStateHandle shared = files(h1).iterator().next();
        assertThat(files(h2)).containsExactly(shared);
        assertThat(TestStorages.files(storage)).hasSize(1);
        assertThat(Changes.read(storage.createReader(), h1)).containsExactly("1:0123456789");
        assertThat(Changes.read(storage.createReader(), h2)).containsExactly("2:abcdefghij");
    }

    private Configuration checkpointWaitConfig(Duration maxWait) {
        Configuration config = TestStorages.config(new Path(new File(tmp, "dfs").toURI()));
        config.set(DfsChangelogOptions.PERSIST_DELAY, Duration.ofMillis(10));
        config.set(DfsChangelogOptions.CHECKPOINT_MAX_WAIT, maxWait);
        return config;
    }

    @Test
    void checkpointRequest_waitsForTheOtherWriters_thenTheyShareOneFile() throws Exception {
        open(checkpointWaitConfig(Duration.ofHours(1)));
        DfsChangelogWriter w1 = writer();
        DfsChangelogWriter w2 = writer();
        w1.append(1, bytes("first"));
        w2.append(2, bytes("second"));
        CompletableFuture<SnapshotResult<ChangelogStateHandleStreamImpl>> f1 =
                w1.persist(SequenceNumber.of(0), 1);
        // far beyond the 10 ms persist delay: still waiting for w2's request of checkpoint 1
        Thread.sleep(100);
        assertThat(f1).isNotDone();
        assertThat(storage.getRegistry().trackedFiles()).isZero();
        ChangelogStateHandleStreamImpl h2 = persist(w2, 0, 1);
        ChangelogStateHandleStreamImpl h1 =
                f1.get(1, TimeUnit.MINUTES).getJobManagerOwnedSnapshot();
        assertThat(files(h1)).isEqualTo(files(h2));
        assertThat(TestStorages.files(storage)).hasSize(1);
        assertThat(Changes.read(storage.createReader(), h1)).containsExactly("1:first");
        assertThat(Changes.read(storage.createReader(), h2)).containsExactly("2:second");
    }

    @Test
    void checkpointRequest_ofAWriterWithNothingToUpload_stillCutsTheBatch() throws Exception {
        open(checkpointWaitConfig(Duration.ofHours(1)));
        DfsChangelogWriter busy = writer();
        DfsChangelogWriter idle = writer();
        busy.append(1, bytes("only"));
        CompletableFuture<SnapshotResult<ChangelogStateHandleStreamImpl>> f1 =
                busy.persist(SequenceNumber.of(0), 1);
        assertThat(f1).isNotDone();
        assertThat(persist(idle, 0, 1)).isNull(); // nothing to upload, but it asked
        ChangelogStateHandleStreamImpl h1 =
                f1.get(1, TimeUnit.MINUTES).getJobManagerOwnedSnapshot();
        assertThat(Changes.read(storage.createReader(), h1)).containsExactly("1:only");
    }

    @Test
    void checkpointRequest_isUploadedAfterTheMaxWait_whenAnotherWriterNeverAsks() throws Exception {
        open(checkpointWaitConfig(Duration.ofMillis(50)));
        DfsChangelogWriter w1 = writer();
        writer(); // its task declined the checkpoint: it never asks
        w1.append(1, bytes("alone"));
        ChangelogStateHandleStreamImpl h1 =
                w1.persist(SequenceNumber.of(0), 1)
                        .get(1, TimeUnit.MINUTES)
                        .getJobManagerOwnedSnapshot();
        assertThat(Changes.read(storage.createReader(), h1)).containsExactly("1:alone");
        // the next checkpoint's requests start afresh: the unanswered one is forgotten
        w1.append(1, bytes("next"));
        assertThat(
                        Changes.read(
                                storage.createReader(),
                                w1.persist(SequenceNumber.of(1), 2)
                                        .get(1, TimeUnit.MINUTES)
                                        .getJobManagerOwnedSnapshot()))
                .containsExactly("1:next");
    }

    /**
     * A writer that Flink left open (its task's restore failed after the changelog backend created
     * it) never asks again: after it skipped three checkpoints, the others' batches no longer wait
     * {@code batch.checkpoint-max-wait} (here 10 minutes) for it.
     */
    @Test
    void aWriterThatSkippedTheLastThreeCheckpoints_isNoLongerWaitedFor() throws Exception {
        open(checkpointWaitConfig(Duration.ofMinutes(10)));
        DfsChangelogWriter w1 = writer();
        writer(); // leaked: never used, never closed
        // checkpoints 1 to 3: nothing to upload, so nothing waits; the leaked writer skips all
        for (long id = 1; id <= CheckpointRequests.MISSED_ROUNDS_LIMIT; id++) {
            persist(w1, 0, id);
        }
        w1.append(1, bytes("a"));
        ChangelogStateHandleStreamImpl h3 =
                w1.persist(SequenceNumber.of(0), CheckpointRequests.MISSED_ROUNDS_LIMIT + 1)
                        .get(1, TimeUnit.MINUTES) // not the 10 minutes of the max wait
                        .getJobManagerOwnedSnapshot();
        assertThat(Changes.read(storage.createReader(), h3)).containsExactly("1:a");
    }

    @Test
    void largeIntervals_areSealedAndEncodedAhead_andReadBackInAppendOrder() throws Exception {
        open();
        DfsChangelogWriter writer = writer();
        int size = (int) (DfsChangelogOptions.ENCODE_AHEAD_SIZE.defaultValue().getBytes() / 2 + 1);
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            byte[] change = new byte[size];
            java.util.Arrays.fill(change, (byte) ('a' + i));
            writer.append(i % 3, change);
            expected.add(
                    (i % 3) + ":" + new String(change, java.nio.charset.StandardCharsets.UTF_8));
        }
        // 5 x (half a MiB + 1): sealed early twice, the rest is still active
        assertThat(writer.retainedChangeSets()).isEqualTo(2);
        ChangelogStateHandleStreamImpl handle = persist(writer, 0, 1);
        assertThat(handle.getHandlesAndOffsets()).hasSize(3);
        List<String> read = Changes.read(storage.createReader(), handle);
        // replayed by key group, in append order within each key group across the change sets
        assertThat(read)
                .containsExactly(
                        expected.get(0),
                        expected.get(3),
                        expected.get(1),
                        expected.get(4),
                        expected.get(2));
    }

    @Test
    void sharedFileNoCheckpointUsed_isDeletedAfterTheLastRelease() throws Exception {
        Configuration config = TestStorages.config(new Path(new File(tmp, "dfs").toURI()));
        config.set(DfsChangelogOptions.PERSIST_DELAY, Duration.ofHours(1));
        config.set(DfsChangelogOptions.PERSIST_SIZE_THRESHOLD, MemorySize.parse("20b"));
        config.set(DfsChangelogOptions.PREEMPTIVE_PERSIST_THRESHOLD, MemorySize.parse("10b"));
        open(config);
        DfsChangelogWriter w1 = writer();
        DfsChangelogWriter w2 = writer();
        w1.append(1, bytes("0123456789")); // below the two writers' 2 x 10 bytes
        w2.append(2, bytes("abcdefghij")); // 20 bytes: both upload pre-emptively, one batch
        TestStorages.waitUntil(() -> storage.getRegistry().trackedFiles() == 1, "one shared file");
        TestStorages.waitUntil(
                () -> w1.notUploadedBytes() == 0 && w2.notUploadedBytes() == 0, "both uploaded");
        assertThat(TestStorages.files(storage)).hasSize(1);

        w1.truncate(w1.nextSequenceNumber());
        assertThat(storage.getRegistry().trackedFiles()).isEqualTo(1);
        assertThat(TestStorages.files(storage)).hasSize(1);
        w2.truncate(w2.nextSequenceNumber());
        TestStorages.waitUntil(() -> TestStorages.files(storage).isEmpty(), "shared file deleted");
    }

    /**
     * From a review of the ownership protocol: a file named by a late acknowledgement of an aborted
     * checkpoint (registered by the JobManager at that checkpoint) that also holds another writer's
     * change set handed out only later. The aborted checkpoint's writer resets and re-uploads its
     * change set, the next checkpoint completes without naming the file, the JobManager deletes it
     * (its last registration is below the retained checkpoint), and the other writer's next
     * checkpoint names the deleted file.
     */
    @Test
    void aFileOfAnAbortedCheckpointsLateAck_isNotHandedOutAfterTheJobManagerDeletedIt()
            throws Exception {
        Configuration config = TestStorages.config(new Path(new File(tmp, "dfs").toURI()));
        config.set(DfsChangelogOptions.PERSIST_DELAY, Duration.ZERO);
        config.set(DfsChangelogOptions.PREEMPTIVE_PERSIST_THRESHOLD, MemorySize.parse("10b"));
        open(config);
        DfsChangelogWriter a = writer();
        DfsChangelogWriter b = writer();
        // b, a checkpoint ahead of a, takes checkpoint 2 first
        b.append(1, bytes("b0"));
        SequenceNumber bTo2 = b.nextSequenceNumber();
        ChangelogStateHandleStreamImpl b2 = persist(b, 0, 2);
        // after that, b's and a's changes go pre-emptively into one file f (a's 12 bytes pass
        // the threshold and take b's 9 pending bytes along)
        b.append(2, bytes("abcdefghi"));
        a.append(1, bytes("0123456789AB"));
        TestStorages.waitUntil(
                () -> a.notUploadedBytes() == 0 && b.notUploadedBytes() == 0, "both uploaded");
        // a reaches barrier 1 late: its acknowledgement names f (the JobManager registers f at 1)
        SequenceNumber aTo1 = a.nextSequenceNumber();
        StreamStateHandle f = files(persist(a, 0, 1)).iterator().next();
        a.reset(SequenceNumber.of(0), aTo1, 1); // checkpoint 1 was aborted
        SequenceNumber aTo2 = a.nextSequenceNumber();
        ChangelogStateHandleStreamImpl a2 = persist(a, 0, 2);
        a.confirm(SequenceNumber.of(0), aTo2, 2);
        b.confirm(SequenceNumber.of(0), bTo2, 2);
        assertThat(files(b2)).doesNotContain(f);
        assertThat(files(a2)).as("a's change set went to a new file").doesNotContain(f);
        f.discardState(); // checkpoint 2 completed and subsumed 1: f was last registered at 1

        ChangelogStateHandleStreamImpl b3 = persist(b, 0, 3);
        assertThat(files(b3)).as("files named by checkpoint 3").allMatch(h -> exists(h));
        assertThat(Changes.read(storage.createReader(), b3)).contains("2:abcdefghi");
    }

    @Test
    void preemptiveUpload_happensWithoutPersist_andIsReused() throws Exception {
        Configuration config = TestStorages.config(new Path(new File(tmp, "dfs").toURI()));
        config.set(DfsChangelogOptions.PREEMPTIVE_PERSIST_THRESHOLD, MemorySize.parse("10b"));
        open(config);
        DfsChangelogWriter writer = writer();
        writer.append(1, bytes("0123456789ABC"));
        TestStorages.waitUntil(() -> TestStorages.files(storage).size() == 1, "pre-emptive upload");
        assertThat(writer.notUploadedBytes()).isZero();
        ChangelogStateHandleStreamImpl handle = persist(writer, 0, 1);
        assertThat(TestStorages.files(storage)).hasSize(1);
        assertThat(Changes.read(storage.createReader(), handle)).containsExactly("1:0123456789ABC");
    }

    @Test
    void preemptiveUploads_ofAllWritersOnTheTaskManager_goOutTogetherInOneFile() throws Exception {
        Configuration config = TestStorages.config(new Path(new File(tmp, "dfs").toURI()));
        config.set(DfsChangelogOptions.PREEMPTIVE_PERSIST_THRESHOLD, MemorySize.parse("10b"));
        open(config);
        DfsChangelogWriter w1 = writer();
        DfsChangelogWriter w2 = writer();
        w2.append(1, bytes("abcdef"));
        w1.append(1, bytes("0123456789AB")); // 12 bytes: over 10 alone, under 2 x 10 together
        assertThat(storage.getRegistry().trackedFiles()).isZero();
        assertThat(storage.getPreemptiveUploads().rounds()).isZero();

        w2.append(1, bytes("ghij")); // 22 bytes held by the two writers: both upload
        TestStorages.waitUntil(
                () -> w1.notUploadedBytes() == 0 && w2.notUploadedBytes() == 0, "both uploaded");
        assertThat(storage.getPreemptiveUploads().rounds()).isEqualTo(1);
        TestStorages.waitUntil(() -> storage.getRegistry().trackedFiles() == 1, "tracked");
        assertThat(TestStorages.files(storage)).hasSize(1);

        // both checkpoints reuse the shared file, nothing is uploaded again
        ChangelogStateHandleStreamImpl h1 = persist(w1, 0, 1);
        ChangelogStateHandleStreamImpl h2 = persist(w2, 0, 1);
        assertThat(files(h1)).isEqualTo(files(h2));
        assertThat(TestStorages.files(storage)).hasSize(1);
        assertThat(Changes.read(storage.createReader(), h1)).containsExactly("1:0123456789AB");
        assertThat(Changes.read(storage.createReader(), h2)).containsExactly("1:abcdef", "1:ghij");
    }

    /**
     * Flink leaves a writer open that no task uses when a changelog restore fails after the writer
     * was created (the backend is never disposed). Such a writer never holds a byte; before, it
     * still raised the pre-emptive threshold of every other writer of the job on this TaskManager,
     * by one writer's share per failed restore, so their uploads came later and later and their
     * checkpoints had more to upload.
     */
    @Test
    void preemptiveThreshold_countsNoWriterThatHoldsNothing() throws Exception {
        Configuration config = TestStorages.config(new Path(new File(tmp, "dfs").toURI()));
        config.set(DfsChangelogOptions.PREEMPTIVE_PERSIST_THRESHOLD, MemorySize.parse("10b"));
        open(config);
        writer(); // left open by a failed restore: never written to, never closed
        writer();
        DfsChangelogWriter busy = writer();
        busy.append(1, bytes("0123456789AB")); // 12 bytes: over 10 alone, under 3 x 10
        TestStorages.waitUntil(() -> busy.notUploadedBytes() == 0, "uploaded at its threshold");
        assertThat(storage.getPreemptiveUploads().rounds()).isEqualTo(1);
    }

    @Test
    void preemptiveThreshold_countsOnlyOpenWriters() throws Exception {
        Configuration config = TestStorages.config(new Path(new File(tmp, "dfs").toURI()));
        config.set(DfsChangelogOptions.PREEMPTIVE_PERSIST_THRESHOLD, MemorySize.parse("10b"));
        open(config);
        DfsChangelogWriter busy = writer();
        DfsChangelogWriter other = writer();
        other.append(1, bytes("a")); // holds a byte: counts
        busy.append(1, bytes("0123456789ABC")); // 14 < 2 x 10
        assertThat(storage.getPreemptiveUploads().rounds()).isZero();
        other.close(); // now one writer: 13 >= 10, uploaded with the next change
        busy.append(1, bytes("F"));
        TestStorages.waitUntil(() -> busy.notUploadedBytes() == 0, "uploaded alone");
        assertThat(storage.getPreemptiveUploads().rounds()).isEqualTo(1);
        assertThat(storage.getPreemptiveUploads().publishedBytes()).isZero();
    }

    @Test
    void preemptiveUpload_truncatedBeforeAnyCheckpoint_isDeleted() throws Exception {
        Configuration config = TestStorages.config(new Path(new File(tmp, "dfs").toURI()));
        config.set(DfsChangelogOptions.PREEMPTIVE_PERSIST_THRESHOLD, MemorySize.parse("10b"));
        open(config);
        DfsChangelogWriter writer = writer();
        writer.append(1, bytes("0123456789ABC"));
        TestStorages.waitUntil(() -> storage.getRegistry().trackedFiles() == 1, "upload");
        writer.truncate(writer.nextSequenceNumber());
        TestStorages.waitUntil(() -> TestStorages.files(storage).isEmpty(), "file deleted");
    }

    @Test
    void truncateAndClose_deletesTheUncheckpointedTail_only() throws Exception {
        Configuration config = TestStorages.config(new Path(new File(tmp, "dfs").toURI()));
        config.set(DfsChangelogOptions.PREEMPTIVE_PERSIST_THRESHOLD, MemorySize.parse("10b"));
        open(config);
        DfsChangelogWriter writer = writer();
        writer.append(1, bytes("a"));
        StreamStateHandle head = files(persist(writer, 0, 1)).iterator().next();
        SequenceNumber lastUploadedTo = writer.nextSequenceNumber();
        writer.append(1, bytes("0123456789")); // the tail, uploaded pre-emptively
        TestStorages.waitUntil(() -> storage.getRegistry().trackedFiles() == 2, "tail uploaded");

        writer.truncateAndClose(lastUploadedTo);
        TestStorages.waitUntil(() -> TestStorages.files(storage).size() == 1, "tail deleted");
        assertThat(exists(head)).isTrue();
        assertThatThrownBy(() -> writer.append(1, bytes("c")))
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    void close_failsPendingPersist() throws Exception {
        Configuration config = TestStorages.config(new Path(new File(tmp, "dfs").toURI()));
        config.set(DfsChangelogOptions.PERSIST_DELAY, Duration.ofHours(1));
        config.set(DfsChangelogOptions.CHECKPOINT_MAX_WAIT, Duration.ofHours(1));
        open(config);
        DfsChangelogWriter writer = writer();
        writer(); // never asks for checkpoint 1: the batch waits for it
        writer.append(1, bytes("a"));
        CompletableFuture<SnapshotResult<ChangelogStateHandleStreamImpl>> future =
                writer.persist(SequenceNumber.of(0), 1);
        writer.close();
        assertThat(future).isCompletedExceptionally();
    }

    // ---- findings of issue 13; each failed before its fix ----------------------------------

    @Test
    void close_deletesPreemptiveUploadsNoPersistResultContained() throws Exception {
        Configuration config = TestStorages.config(new Path(new File(tmp, "dfs").toURI()));
        config.set(DfsChangelogOptions.PREEMPTIVE_PERSIST_THRESHOLD, MemorySize.parse("4b"));
        open(config);
        DfsChangelogWriter writer = writer();
        writer.append(1, bytes("0123456789")); // uploaded pre-emptively
        TestStorages.waitUntil(
                () ->
                        storage.getRegistry().trackedFiles() == 1
                                && ((InFlightLimiter) storage.getAvailabilityProvider())
                                                .inFlightBytes()
                                        == 0,
                "pre-emptive upload finished");
        writer.close(); // the task failed before any checkpoint used the upload
        TestStorages.waitUntil(() -> TestStorages.files(storage).isEmpty(), "orphan deleted");
    }

    @Test
    void abortedNeverAcknowledgedCheckpoint_itsFileIsDeletedOnceSubsumed() throws Exception {
        open();
        DfsChangelogWriter writer = writer();
        writer.append(1, bytes("a")); // sqn 0
        // checkpoint 1: the persist succeeds, but the task declines before acknowledging, and
        // checkpoint 2 starts before the abort notification, so no reset comes for it
        StreamStateHandle cp1File = files(persist(writer, 0, 1)).iterator().next();

        SequenceNumber materialized = writer.nextSequenceNumber(); // materialized up to sqn 1
        writer.append(2, bytes("b"));
        SequenceNumber upTo2 = writer.nextSequenceNumber();
        ChangelogStateHandleStreamImpl cp2 = persist(writer, 1, 2);
        writer.confirm(materialized, upTo2, 2);
        writer.append(3, bytes("c"));
        SequenceNumber upTo3 = writer.nextSequenceNumber();
        ChangelogStateHandleStreamImpl cp3 = persist(writer, 1, 3);
        writer.confirm(materialized, upTo3, 3);
        // checkpoint 3 subsumed 2: truncate to min(checkpointed up to 2, materialized up to 1)
        writer.truncate(materialized);

        awaitDeleted(cp1File);
        for (StreamStateHandle file : files(cp3)) {
            assertThat(exists(file)).isTrue();
        }
        assertThat(Changes.read(storage.createReader(), cp3)).containsExactly("2:b", "3:c");
        assertThat(files(cp2)).allMatch(DfsChangelogWriterTest::exists);
    }

    @Test
    void truncationOverlappingTheLatestCompletedCheckpoint_keepsItsFile() throws Exception {
        open();
        DfsChangelogWriter writer = writer();
        writer.append(1, bytes("a"));
        ChangelogStateHandleStreamImpl cp1 = persist(writer, 0, 1);
        // checkpoint 1 completes, but its notification arrives after checkpoint 2 started, so
        // confirm is skipped; materialization and the subsumption of an older checkpoint truncate
        SequenceNumber materialized = writer.nextSequenceNumber();
        writer.append(2, bytes("b"));
        writer.persist(materialized, 2);
        writer.truncate(materialized);
        assertThat(files(cp1)).allMatch(DfsChangelogWriterTest::exists);
        assertThat(Changes.read(storage.createReader(), cp1)).containsExactly("1:a");
    }

    @Test
    void failoverOnTheSameTaskManager_keepsTheFilesOfTheCheckpointItRestoresFrom()
            throws Exception {
        open(); // num-retained 1
        DfsChangelogWriter before = writer();
        before.append(1, bytes("a"));
        ChangelogStateHandleStreamImpl cp1 = persist(before, 0, 1);
        // checkpoint 1 completes on the JobManager, but the task fails before its confirm
        // arrives; Flink closes the writer, keeping what checkpoint 1 uploaded
        before.truncateAndClose(before.nextSequenceNumber());

        // the task restarts on this TaskManager from checkpoint 1: Flink's changelog backend puts
        // checkpoint 1's (restored, not materialized) handle into each of its checkpoints until it
        // materializes, so checkpoint 2 references checkpoint 1's file too
        DfsChangelogWriter after = writer();
        after.append(2, bytes("b"));
        SequenceNumber upTo = after.nextSequenceNumber();
        persist(after, 0, 2);
        after.confirm(SequenceNumber.of(0), upTo, 2);

        TestStorages.closeAndAwait(storage); // lets any deletion run to its end
        storage = null;
        assertThat(files(cp1)).allMatch(DfsChangelogWriterTest::exists);
    }

    @Test
    void failoverAfterATruncation_keepsTheFilesTheRestoredCheckpointCarries() throws Exception {
        open(); // num-retained 1
        DfsChangelogWriter before = writer();
        before.append(1, bytes("a"));
        ChangelogStateHandleStreamImpl cp1 = persist(before, 0, 1);
        SequenceNumber afterA = before.nextSequenceNumber();
        before.append(2, bytes("b"));
        ChangelogStateHandleStreamImpl cp2 = persist(before, 0, 2); // a and b, two files
        assertThat(files(cp2)).hasSize(2).containsAll(files(cp1));
        // neither confirm arrives (each notification came after the next checkpoint started);
        // checkpoint 1 is subsumed and a materialization covered "a": truncation drops it while
        // checkpoint 2, which still names its file, is the retained one
        before.truncate(afterA);
        before.truncateAndClose(before.nextSequenceNumber()); // then the task fails

        // restored from checkpoint 2: its log handle is in every checkpoint until materialized
        DfsChangelogWriter after = writer();
        after.append(3, bytes("c"));
        SequenceNumber upTo = after.nextSequenceNumber();
        persist(after, 0, 4);
        after.confirm(SequenceNumber.of(0), upTo, 4);

        TestStorages.closeAndAwait(storage);
        storage = null;
        assertThat(files(cp2)).allMatch(DfsChangelogWriterTest::exists);
    }

    // ---- the seed-4 leak of MultiWriterProtocolModelTest; each failed before its fix --------

    @Test
    void resetOfLaterCheckpoint_keepsTheEarlierCheckpointsFile_andDeletesItOnceSubsumed()
            throws Exception {
        open();
        DfsChangelogWriter writer = writer();
        writer.append(1, bytes("a"));
        // checkpoints 10 and 11 both hand out sqn 0 (one file); the JobManager sees neither:
        // 11 is aborted (reset), 10 was aborted before, after 11 started, so no reset for it
        StreamStateHandle file = files(persist(writer, 0, 10)).iterator().next();
        persist(writer, 0, 11);
        SequenceNumber to = writer.nextSequenceNumber();
        writer.reset(SequenceNumber.of(0), to, 11);
        assertThat(storage.getRegistry().isTracked(file))
                .as("the reset must not hand the file to a JobManager that may never see it")
                .isTrue();

        // materialized up to sqn 1 and truncated: checkpoint 10 might still be the retained one
        // (completed, its confirm skipped), so the file is kept until 10 is subsumed
        writer.truncate(to);
        assertThat(exists(file)).isTrue();
        assertThat(storage.getRegistry().referencesInDoubt()).isOne();

        // checkpoint 12 completes without the file: nobody can reference it any more
        persist(writer, 1, 12);
        writer.confirm(to, to, 12);
        awaitDeleted(file);
        assertThat(storage.getRegistry().referencesInDoubt()).isZero();
    }

    @Test
    void uploadTruncatedWhileInFlight_capturedByPersistOfAbortedCheckpoint_isDeletedOnceSubsumed()
            throws Exception {
        Configuration config = TestStorages.config(new Path(new File(tmp, "dfs").toURI()));
        // uploads wait in the batch until 20 bytes are queued; 10 bytes held by the two writers
        // together (5 per writer) start a pre-emptive upload
        config.set(DfsChangelogOptions.PERSIST_DELAY, Duration.ofHours(1));
        config.set(DfsChangelogOptions.PERSIST_SIZE_THRESHOLD, MemorySize.parse("20b"));
        config.set(DfsChangelogOptions.PREEMPTIVE_PERSIST_THRESHOLD, MemorySize.parse("5b"));
        open(config);
        DfsChangelogWriter writer = writer();
        DfsChangelogWriter other = writer();
        writer.append(1, bytes("0123456789")); // sqn 0, uploaded pre-emptively: waits in the batch
        // checkpoint 10's persist captures sqn 0; checkpoint 11 starts before 10's abort
        // notification (so 10 gets no reset), then 11 is aborted: 10's persist stays pending
        CompletableFuture<SnapshotResult<ChangelogStateHandleStreamImpl>> persist10 =
                writer.persist(SequenceNumber.of(0), 10);
        CompletableFuture<SnapshotResult<ChangelogStateHandleStreamImpl>> persist11 =
                writer.persist(SequenceNumber.of(0), 11);
        SequenceNumber materialized = writer.nextSequenceNumber();
        writer.reset(SequenceNumber.of(0), materialized, 11);
        assertThat(persist11).isCompletedExceptionally();
        assertThat(persist10).isNotDone();
        // checkpoint 12 completes without sqn 0 (materialized), which is then truncated while
        // its upload is still in flight
        assertThat(persist(writer, 1, 12)).isNull();
        writer.confirm(materialized, materialized, 12);
        writer.truncate(materialized);

        other.append(2, bytes("abcdefghij")); // pre-emptive: fills and sends the batch
        StreamStateHandle file =
                files(persist10.get(1, TimeUnit.MINUTES).getJobManagerOwnedSnapshot())
                        .iterator()
                        .next();
        TestStorages.waitUntil(
                () -> ((InFlightLimiter) storage.getAvailabilityProvider()).inFlightBytes() == 0,
                "both uploads' callbacks ran");
        other.truncate(other.nextSequenceNumber()); // never checkpointed: releases its share
        // checkpoint 10's result reached no JobManager and 10 can no longer complete
        awaitDeleted(file);
        assertThat(storage.getRegistry().trackedFiles()).isZero();
    }

    // ---- the seed-3 leak of MultiWriterProtocolModelTest; each failed before its fix --------

    /**
     * Opens a storage (num-retained 1) whose batches go when 20 bytes are queued, never on time;
     * returns a first writer.
     */
    private DfsChangelogWriter batchingWriters() throws Exception {
        Configuration config = TestStorages.config(new Path(new File(tmp, "dfs").toURI()));
        config.set(DfsChangelogOptions.PERSIST_DELAY, Duration.ofHours(1));
        config.set(DfsChangelogOptions.PERSIST_SIZE_THRESHOLD, MemorySize.parse("20b"));
        open(config);
        return writer();
    }

    /** Two writers' change sets in one file, handed out to checkpoint 1 that nobody confirms. */
    private StreamStateHandle sharedFileOfAnUnconfirmedCheckpoint(
            DfsChangelogWriter w1, DfsChangelogWriter w2) throws Exception {
        w1.append(1, bytes("0123456789"));
        w2.append(2, bytes("abcdefghij"));
        CompletableFuture<SnapshotResult<ChangelogStateHandleStreamImpl>> f1 =
                w1.persist(SequenceNumber.of(0), 1);
        ChangelogStateHandleStreamImpl h2 = persist(w2, 0, 1); // 20 bytes: the batch goes
        StreamStateHandle shared = files(f1.get().getJobManagerOwnedSnapshot()).iterator().next();
        assertThat(files(h2)).containsExactly(shared);
        return shared;
    }

    /** Checkpoint {@code id} completes and is confirmed by a third writer only. */
    private void confirmedElsewhere(long id) throws Exception {
        DfsChangelogWriter w3 = writer();
        w3.append(3, bytes("ABCDEFGHIJKLMNOPQRST")); // fills a batch of its own
        SequenceNumber upTo = w3.nextSequenceNumber();
        persist(w3, 0, id);
        w3.confirm(SequenceNumber.of(0), upTo, id);
    }

    @Test
    void writerClosingAfterItsDoubtWasResolved_doesNotKeepAFileOtherWritersStillShare()
            throws Exception {
        DfsChangelogWriter w1 = batchingWriters();
        DfsChangelogWriter w2 = writer();
        StreamStateHandle shared = sharedFileOfAnUnconfirmedCheckpoint(w1, w2);
        // w1 materializes and truncates: checkpoint 1 may be the retained one, so its share of
        // the file is kept in doubt; then checkpoint 2 (without the file) completes: w1's share
        // is released, w2's (not yet truncated) keeps the file
        w1.truncate(w1.nextSequenceNumber());
        confirmedElsewhere(2);
        assertThat(storage.getRegistry().referencesInDoubt()).isZero();
        assertThat(storage.getRegistry().isTracked(shared)).isTrue();

        w1.close(); // it has no claim on the file left: it must not hand it over
        assertThat(storage.getRegistry().isTracked(shared)).as("w2's share").isTrue();
        w2.truncate(w2.nextSequenceNumber()); // the last share: checkpoint 1 is subsumed
        awaitDeleted(shared);
        assertThat(storage.getRegistry().trackedFiles()).isZero(); // checkpoint 2's: the JM's
    }

    @Test
    void writerClosing_releasesChangeSetsOfASubsumedCheckpoint_ratherThanHandingThemOver()
            throws Exception {
        DfsChangelogWriter w1 = batchingWriters();
        DfsChangelogWriter w2 = writer();
        StreamStateHandle shared = sharedFileOfAnUnconfirmedCheckpoint(w1, w2);
        confirmedElsewhere(2); // checkpoint 1 can no longer be retained

        // both tasks close with their change sets untruncated: checkpoint 1 cannot be the one
        // they restore from, so its file is deleted rather than left to a JobManager that never
        // saw it
        w1.close();
        assertThat(storage.getRegistry().isTracked(shared)).as("w2's share").isTrue();
        w2.close();
        awaitDeleted(shared);
    }
}
