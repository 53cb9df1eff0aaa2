package io.github.flinkstate.changelog.upload;

import io.github.flinkstate.changelog.registry.TaskFileRegistry;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import javax.annotation.concurrent.GuardedBy;
import javax.annotation.concurrent.ThreadSafe;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.changelog.ChangelogStateHandleStreamImpl;
import org.apache.flink.runtime.state.changelog.LocalChangelogRegistry;
import org.apache.flink.runtime.state.changelog.SequenceNumber;
import org.apache.flink.runtime.state.changelog.StateChange;
import org.apache.flink.runtime.state.changelog.StateChangelogWriter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The changelog of one keyed state backend (one operator subtask): buffers appended changes,
 * uploads them through the shared {@link BatchingUploadScheduler} and builds the {@link
 * ChangelogStateHandleStreamImpl}s that checkpoints reference.
 *
 * <p>Thread safety: thread-safe (one lock). Flink calls it from the task thread; upload results
 * arrive on upload threads. Futures are completed outside the lock.
 *
 * <p>Sequence numbers: the changes appended between two calls of {@link #nextSequenceNumber()} or
 * {@link #persist} share one number and form one change set (one segment), except that every {@code
 * encodeAheadBytes} (option {@code encode-ahead-size}) the active change set is sealed early (and
 * encoded ahead on an upload thread), so such an interval may span several numbers. {@code
 * nextSequenceNumber()} seals the active change set, so every change appended before the call has a
 * smaller number than the returned one, and every change appended after it a number at least as
 * large.
 *
 * <p>Ownership (see docs/changelog-dstl.md, "Deletion rules"): a file is deleted by the TaskManager
 * ({@link TaskFileRegistry}) only when all its change sets were released and none was handed over.
 * While the writer lives, a change set is handed over (the JobManager owns its file) only by {@link
 * #confirm} of a checkpoint whose range contains it: only then is it sure that the JobManager
 * received a result containing it. It is released by {@link #truncate} and {@link #close} if no
 * persist result ever contained it (nor will: a reset fails the aborted checkpoint's pending
 * persist), by {@link #truncateAndClose} (the tail no checkpoint contains), or when its upload
 * result is stale. A {@link #reset} of the only checkpoint that used it releases it once that
 * checkpoint is subsumed (the aborted checkpoint may still be restored, see {@link #reset}'s
 * comment) and it is re-uploaded when needed again. A change set that some persist result
 * contained, or that a pending persist captured, but that no confirm covered is, on truncation (or
 * on the arrival of its upload if it was truncated meanwhile), {@link
 * TaskFileRegistry#releaseWhenSubsumed released once its last checkpoint can no longer be
 * retained}: it may belong to the retained checkpoint (a skipped confirm) or to an aborted one the
 * JobManager never saw (also when a reset of a later checkpoint comes: the earlier one may have
 * been aborted without a reset of its own). When the writer closes (the task failed, was cancelled
 * or finished) such a change set is handed over instead, unless its last checkpoint is already
 * subsumed, and so is every file on which this writer still has a reference in doubt: a job
 * restored from the retained checkpoint references its log from its own checkpoints until it
 * materializes, which no confirmation seen here can tell (a leak when that checkpoint was in fact
 * aborted unseen, never a premature delete). A file whose doubt was resolved (its checkpoint
 * subsumed) is not handed over because another writer's change set in it keeps it tracked. Change
 * bytes are kept until confirm or truncation so that a reset can re-upload them.
 *
 * <p>The task mailbox is not used: results are applied under the lock on upload threads.
 *
 * <p>Invariants (checked by {@link #checkInvariants()}):
 *
 * <ol>
 *   <li>every change set in {@code changeSets} has a sequence number in [lowest, active);
 *   <li>{@code notUploadedBytes} equals the raw bytes of the NOT_UPLOADED change sets in {@code
 *       changeSets};
 *   <li>an UPLOADED change set has a result; a confirmed one is UPLOADED and holds no bytes;
 *   <li>every pending persist still waits for at least one change set (its result is built, under
 *       the lock, as soon as the last one is uploaded).
 * </ol>
 */
@ThreadSafe
public final class DfsChangelogWriter
        implements StateChangelogWriter<ChangelogStateHandleStreamImpl> {

    private static final Logger LOG = LoggerFactory.getLogger(DfsChangelogWriter.class);

    private final String logId;
    private final KeyGroupRange keyGroupRange;
    private final String storageIdentifier;
    private final BatchingUploadScheduler scheduler;
    private final TaskFileRegistry registry;
    private final PreemptiveUploads preemptive;
    private final LocalChangelogRegistry localRegistry;

    /**
     * Raw bytes after which the active changes are sealed into a change set of their own and
     * encoded on an upload thread ahead of time, so that a checkpoint has at most this much left to
     * order and compress (it would otherwise compress everything since the last upload, several
     * MiB, while the job competes for the CPU). The change sets stay separate segments.
     */
    private final long encodeAheadBytes;

    @GuardedBy("this")
    private long activeSqn;

    @GuardedBy("this")
    private List<StateChange> active = new ArrayList<>();

    @GuardedBy("this")
    private long activeBytes;

    @GuardedBy("this")
    private long lowestSqn;

    @GuardedBy("this")
    private final NavigableMap<Long, ChangeSetState> changeSets = new TreeMap<>();

    @GuardedBy("this")
    private long notUploadedBytes;

    @GuardedBy("this")
    private final List<PendingPersist> pending = new ArrayList<>();

    @GuardedBy("this")
    private long lastUploadId;

    /**
     * The highest checkpoint this writer persisted for so far (see uploadAgainIfPossiblyDeleted).
     */
    @GuardedBy("this")
    private long previousPersist = Long.MIN_VALUE;

    /** {@code activeBytes + notUploadedBytes} as last published to {@link #preemptive}. */
    @GuardedBy("this")
    private long publishedBytes;

    @GuardedBy("this")
    private boolean closed;

    public DfsChangelogWriter(
            String logId,
            KeyGroupRange keyGroupRange,
            String storageIdentifier,
            BatchingUploadScheduler scheduler,
            TaskFileRegistry registry,
            PreemptiveUploads preemptive,
            LocalChangelogRegistry localRegistry,
            long encodeAheadBytes) {
        this.logId = logId;
        this.keyGroupRange = keyGroupRange;
        this.storageIdentifier = storageIdentifier;
        this.scheduler = scheduler;
        this.registry = registry;
        this.preemptive = preemptive;
        this.localRegistry = localRegistry;
        this.encodeAheadBytes = encodeAheadBytes;
    }

    @Override
    public SequenceNumber initialSequenceNumber() {
        return SequenceNumber.of(0);
    }

    @Override
    public synchronized SequenceNumber nextSequenceNumber() {
        seal();
        return SequenceNumber.of(activeSqn);
    }

    @Override
    public void appendMeta(byte[] value) throws IOException {
        append(StateChange.ofMetadataChange(value));
    }

    @Override
    public void append(int keyGroup, byte[] value) throws IOException {
        append(StateChange.ofDataChange(keyGroup, value));
    }

    private void append(StateChange change) {
        boolean uploadAll = false;
        ChangeSet encodeAhead = null;
        synchronized (this) {
            checkOpen();
            active.add(change);
            activeBytes += change.getChange().length;
            if (activeBytes >= encodeAheadBytes) {
                encodeAhead = seal();
            }
            if (activeBytes + notUploadedBytes - publishedBytes >= preemptive.publishGranule()) {
                uploadAll = publish();
            }
        }
        if (encodeAhead != null) {
            scheduler.encodeAhead(encodeAhead);
        }
        if (uploadAll) {
            scheduler.upload(preemptive.uploadAll());
        }
    }

    /**
     * Seals the active change set and starts uploading every change set not uploaded yet, ahead of
     * a checkpoint; called by {@link PreemptiveUploads} for all writers of the TaskManager at once.
     * Returns the task, or null if there is nothing to upload or the writer is closed.
     */
    UploadTask startPreemptiveUpload() {
        synchronized (this) {
            if (closed) {
                return null;
            }
            seal();
            UploadTask task = startUploads(new ArrayList<>(changeSets.tailMap(lowestSqn).values()));
            publish(); // a decrease: never asks for another round while this one runs
            if (task != null) {
                LOG.debug("{} uploads pre-emptively up to sqn {}", logId, activeSqn);
            }
            return task;
        }
    }

    /** Publishes the bytes not uploaded yet; true if the caller must then upload all writers. */
    @GuardedBy("this")
    private boolean publish() {
        publishedBytes = activeBytes + notUploadedBytes;
        return preemptive.publish(this, publishedBytes);
    }

    @Override
    public CompletableFuture<SnapshotResult<ChangelogStateHandleStreamImpl>> persist(
            SequenceNumber from, long checkpointId) throws IOException {
        PendingPersist persist;
        UploadTask task;
        Completion ready = null;
        boolean uploadAll;
        synchronized (this) {
            checkOpen();
            seal();
            long start = Math.max(number(from), lowestSqn);
            persist =
                    new PendingPersist(
                            checkpointId,
                            new ArrayList<>(changeSets.subMap(start, activeSqn).values()));
            uploadAgainIfPossiblyDeleted(persist.changeSets);
            previousPersist = Math.max(previousPersist, checkpointId);
            task = startUploads(persist.changeSets);
            if (persist.allUploaded()) {
                ready = completion(persist);
            } else {
                pending.add(persist);
            }
            LOG.debug(
                    "{} persists sqn [{}, {}) for checkpoint {}: {} change sets, {} to upload",
                    logId,
                    start,
                    activeSqn,
                    checkpointId,
                    persist.changeSets.size(),
                    task == null ? 0 : task.changeSets().size());
            uploadAll = publish();
        }
        scheduler.persist(this, checkpointId, task);
        if (uploadAll) {
            scheduler.upload(preemptive.uploadAll());
        }
        if (ready != null) {
            ready.complete(localRegistry);
        }
        return persist.future;
    }

    @Override
    public void truncate(SequenceNumber to) {
        boolean uploadAll;
        synchronized (this) {
            long upTo = number(to);
            Iterator<ChangeSetState> it = changeSets.headMap(upTo, false).values().iterator();
            while (it.hasNext()) {
                drop(it.next(), false);
                it.remove();
            }
            lowestSqn = Math.max(lowestSqn, upTo);
            LOG.debug("{} truncated to sqn {} (exclusive)", logId, upTo);
            uploadAll = publish();
        }
        if (uploadAll) {
            scheduler.upload(preemptive.uploadAll());
        }
    }

    @Override
    public void confirm(SequenceNumber from, SequenceNumber to, long checkpointId) {
        synchronized (this) {
            for (ChangeSetState state : changeSets.values()) {
                // Change sets outside the range that an earlier checkpoint used stay referenced
                // here: that checkpoint may be retained (its confirm skipped) or may have been
                // aborted unseen; truncation releases them once it is subsumed.
                boolean inRange =
                        state.sequenceNumber >= number(from) && state.sequenceNumber < number(to);
                if (state.status == ChangeSetState.Status.UPLOADED && !state.confirmed && inRange) {
                    state.confirmed = true;
                    state.changeSet = null;
                    registry.handOver(state.result.file());
                }
            }
            LOG.debug("{} confirmed sqn [{}, {}) for checkpoint {}", logId, from, to, checkpointId);
        }
        // after the hand-overs above: may release references in doubt of older checkpoints
        registry.checkpointConfirmed(checkpointId);
        // only the latest confirmed checkpoint is kept for local recovery
        localRegistry.discardUpToCheckpoint(checkpointId);
    }

    @Override
    public void reset(SequenceNumber from, SequenceNumber to, long checkpointId) {
        List<UploadTask> tasks = new ArrayList<>();
        List<PendingPersist> aborted = new ArrayList<>();
        boolean uploadAll;
        synchronized (this) {
            for (ChangeSetState state : changeSets.subMap(number(from), number(to)).values()) {
                if (state.confirmed
                        || state.status != ChangeSetState.Status.UPLOADED
                        || state.firstCheckpoint == Long.MAX_VALUE) {
                    // the JobManager never saw this result: keep using it
                    continue;
                }
                if (state.firstCheckpoint < checkpointId || state.lastCheckpoint > checkpointId) {
                    // another checkpoint's result contains it: that checkpoint may be retained
                    // (its confirm skipped) or may have been aborted unseen by the JobManager.
                    // Keep it unconfirmed: truncation and close release it once that checkpoint
                    // is subsumed; handing it over here would leak it in the second case.
                    continue;
                }
                // only the aborted checkpoint used it: re-upload if requested again. The old
                // file is kept until that checkpoint is subsumed: an abort does not prove the
                // JobManager dropped it (a write to its highly available checkpoint store that
                // failed in doubt aborts the checkpoint on the tasks, yet a JobManager failover
                // may restore it)
                registry.releaseWhenResetSubsumed(state.result.file(), checkpointId, this);
                uploadAgain(state);
            }
            Iterator<PendingPersist> it = pending.iterator();
            while (it.hasNext()) {
                PendingPersist persist = it.next();
                if (persist.checkpointId >= checkpointId) {
                    // its result must never be built: it would count as handed out although no
                    // JobManager will receive it, and truncation would then never delete it
                    aborted.add(persist);
                    it.remove();
                } else {
                    add(tasks, startUploads(persist.changeSets));
                }
            }
            LOG.debug(
                    "{} reset sqn [{}, {}) of aborted checkpoint {}",
                    logId,
                    from,
                    to,
                    checkpointId);
            uploadAll = publish();
        }
        if (uploadAll) {
            scheduler.upload(preemptive.uploadAll());
        }
        for (PendingPersist persist : aborted) {
            persist.future.completeExceptionally(
                    new IOException(
                            "Checkpoint " + persist.checkpointId + " was aborted (" + logId + ")"));
        }
        localRegistry.discardUpToCheckpoint(checkpointId + 1);
        tasks.forEach(this::submit);
    }

    @Override
    public void truncateAndClose(SequenceNumber from) {
        synchronized (this) {
            Iterator<ChangeSetState> it =
                    changeSets.tailMap(number(from), true).values().iterator();
            while (it.hasNext()) {
                drop(it.next(), true);
                it.remove();
            }
        }
        close();
    }

    @Override
    public void close() {
        List<PendingPersist> toFail;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            preemptive.unregister(this);
            active = new ArrayList<>();
            activeBytes = 0;
            toFail = new ArrayList<>(pending);
            pending.clear();
            // nobody will use these change sets again: files no result handed out are deleted;
            // files a checkpoint may hold are handed over, never deleted here: the task is
            // closing (failed, cancelled or finished), and a job restored from that checkpoint
            // puts its handles into its own checkpoints until it materializes, so no later
            // confirmation on this TaskManager says the file is no longer needed
            // (unless a checkpoint confirmed on this TaskManager since subsumed it)
            int kept = registry.handOverInDoubt(this); // truncated earlier, as below
            for (ChangeSetState state : changeSets.values()) {
                if (state.status == ChangeSetState.Status.UPLOADED && !state.confirmed) {
                    if (state.lastCheckpoint != Long.MIN_VALUE) {
                        if (registry.handOverUnlessSubsumed(
                                state.result.file(), state.lastCheckpoint)) {
                            kept++;
                        }
                    } else {
                        registry.release(state.result.file());
                    }
                }
                // UPLOADING: released when the result arrives (closed)
            }
            changeSets.clear();
            notUploadedBytes = 0;
            LOG.debug(
                    "{} closed; {} change sets of unconfirmed checkpoints handed over",
                    logId,
                    kept);
        }
        for (PendingPersist persist : toFail) {
            persist.future.completeExceptionally(
                    new IOException("Changelog writer " + logId + " was closed"));
        }
    }

    // ------------------------------------------------------------------------------------------

    /** Seals the active changes into a change set under a new sequence number; returns it. */
    @GuardedBy("this")
    private ChangeSet seal() {
        if (active.isEmpty()) {
            return null;
        }
        ChangeSet changeSet = new ChangeSet(activeSqn, active, activeBytes);
        changeSets.put(activeSqn, new ChangeSetState(changeSet));
        notUploadedBytes += activeBytes;
        activeSqn++;
        active = new ArrayList<>();
        activeBytes = 0;
        return changeSet;
    }

    /** Marks the NOT_UPLOADED change sets of the list as uploading; returns their task or null. */
    @GuardedBy("this")
    private UploadTask startUploads(List<ChangeSetState> states) {
        List<ChangeSetState> toUpload = new ArrayList<>();
        List<ChangeSet> sets = new ArrayList<>();
        long uploadId = lastUploadId + 1;
        for (ChangeSetState state : states) {
            if (state.status == ChangeSetState.Status.NOT_UPLOADED && state.changeSet != null) {
                state.status = ChangeSetState.Status.UPLOADING;
                state.uploadId = uploadId;
                if (isLive(state)) {
                    notUploadedBytes -= state.rawBytes;
                }
                toUpload.add(state);
                sets.add(state.changeSet);
            }
        }
        if (toUpload.isEmpty()) {
            return null;
        }
        lastUploadId = uploadId;
        return new UploadTask(
                sets, (results, failure) -> onUploaded(uploadId, toUpload, results, failure));
    }

    private void submit(UploadTask task) {
        if (task != null) {
            scheduler.upload(task);
        }
    }

    private void onUploaded(
            long uploadId,
            List<ChangeSetState> states,
            List<UploadResult> results,
            Throwable failure) {
        List<Completion> completed = new ArrayList<>();
        List<PendingPersist> failed = new ArrayList<>();
        List<UploadTask> retries = new ArrayList<>();
        boolean uploadAll = false;
        if (failure != null) {
            preemptive.uploadFailed(); // before the publish below, which would start a round
        } else {
            preemptive.uploadSucceeded();
        }
        synchronized (this) {
            for (int i = 0; i < states.size(); i++) {
                ChangeSetState state = states.get(i);
                boolean current =
                        state.status == ChangeSetState.Status.UPLOADING
                                && state.uploadId == uploadId;
                if (failure != null) {
                    if (current) {
                        backToNotUploaded(state);
                    }
                    continue;
                }
                StreamStateHandle file = results.get(i).file();
                if (!current) {
                    LOG.debug("{} sqn {}: stale result in {}", logId, state.sequenceNumber, file);
                    registry.release(file);
                } else {
                    state.status = ChangeSetState.Status.UPLOADED;
                    state.result = results.get(i);
                    long capturedBy = capturingCheckpoint(state);
                    LOG.debug(
                            "{} sqn {} uploaded to {} (closed {}, live {}, captured by {})",
                            logId,
                            state.sequenceNumber,
                            file,
                            closed,
                            isLive(state),
                            capturedBy == Long.MIN_VALUE ? "none" : capturedBy);
                    if (closed || (!isLive(state) && capturedBy == Long.MIN_VALUE)) {
                        // truncated meanwhile (or closed) and no ongoing persist hands it out
                        registry.release(file);
                    } else if (!isLive(state)) {
                        // truncated meanwhile: no later persist can contain it. A pending
                        // persist that captured it hands it out below, but its checkpoint may
                        // be aborted unseen (e.g. 10's persist still pending when 11 started
                        // and was reset): release it once that checkpoint is subsumed
                        registry.releaseWhenSubsumed(file, capturedBy, this);
                    }
                }
            }
            Iterator<PendingPersist> it = pending.iterator();
            while (it.hasNext()) {
                PendingPersist persist = it.next();
                if (persist.future.isDone()) {
                    it.remove();
                } else if (failure != null && persist.dependsOn(states)) {
                    failed.add(persist);
                    it.remove();
                } else if (persist.allUploaded()) {
                    // built under the lock, so no truncation can release what it hands out
                    completed.add(completion(persist));
                    it.remove();
                } else {
                    add(retries, startUploads(persist.changeSets));
                }
            }
            if (!closed) {
                uploadAll = publish();
            }
        }
        if (uploadAll) {
            scheduler.upload(preemptive.uploadAll());
        }
        for (PendingPersist persist : failed) {
            persist.future.completeExceptionally(
                    new IOException(
                            "Could not persist the changelog of "
                                    + logId
                                    + " for checkpoint "
                                    + persist.checkpointId
                                    + ": "
                                    + failure.getMessage(),
                            failure));
        }
        completed.forEach(c -> c.complete(localRegistry));
        retries.forEach(this::submit);
    }

    /**
     * Change sets this writer hands out for the first time may sit in a file that another writer's
     * result named at an older checkpoint than this writer's previous persist (that writer was a
     * checkpoint behind: a late acknowledgement of an aborted checkpoint, then a reset). A
     * checkpoint this writer took part in may then have completed without naming the file, and the
     * JobManager deletes such a file: those change sets are uploaded again instead. Any completed
     * checkpoint is one this writer persisted, so a file last named at or after its previous
     * persist is safe.
     */
    @GuardedBy("this")
    private void uploadAgainIfPossiblyDeleted(List<ChangeSetState> states) {
        int again = 0;
        for (ChangeSetState state : states) {
            if (state.status != ChangeSetState.Status.UPLOADED
                    || state.confirmed
                    || state.firstCheckpoint != Long.MAX_VALUE) {
                continue;
            }
            long named = state.result.naming().lastNamed();
            if (named == Long.MIN_VALUE || named >= previousPersist) {
                continue;
            }
            releaseToUploadAgain(state);
            again++;
        }
        if (again > 0) {
            LOG.info(
                    "{} uploads {} change set(s) again: their file was last named by checkpoint"
                            + " results older than this writer's checkpoint {}, so the JobManager"
                            + " may have deleted it",
                    logId,
                    again,
                    previousPersist);
        }
    }

    /**
     * Gives up a live, uploaded change set's claim on its file (never handed over for it): it is
     * uploaded again when a persist needs it.
     */
    @GuardedBy("this")
    private void releaseToUploadAgain(ChangeSetState state) {
        registry.release(state.result.file());
        uploadAgain(state);
    }

    /** Makes a live, uploaded change set whose claim on its file was given up uploadable again. */
    @GuardedBy("this")
    private void uploadAgain(ChangeSetState state) {
        backToNotUploaded(state);
        state.firstCheckpoint = Long.MAX_VALUE;
        state.lastCheckpoint = Long.MIN_VALUE;
        state.reportedIncrementally = false;
    }

    @GuardedBy("this")
    private void backToNotUploaded(ChangeSetState state) {
        state.status = ChangeSetState.Status.NOT_UPLOADED;
        state.result = null;
        if (isLive(state)) {
            notUploadedBytes += state.rawBytes;
        }
    }

    /**
     * Builds a persist's result while holding the lock: from here on its change sets count as
     * handed out, so a concurrent truncation hands their files over instead of releasing them.
     */
    @GuardedBy("this")
    private Completion completion(PendingPersist persist) {
        List<StreamStateHandle> localFiles = new ArrayList<>();
        SnapshotResult<ChangelogStateHandleStreamImpl> result =
                PersistResults.build(
                        persist.changeSets,
                        persist.checkpointId,
                        keyGroupRange,
                        storageIdentifier,
                        localFiles);
        return new Completion(persist, result, localFiles);
    }

    /** A persist result ready to be published outside the lock. */
    private record Completion(
            PendingPersist persist,
            SnapshotResult<ChangelogStateHandleStreamImpl> result,
            List<StreamStateHandle> localFiles) {

        void complete(LocalChangelogRegistry localRegistry) {
            for (StreamStateHandle local : localFiles) {
                localRegistry.register(local, persist.checkpointId);
            }
            persist.future.complete(result);
        }
    }

    /**
     * Removes a truncated change set's claim on its file. A change set that was handed out in a
     * persist result, or that a pending persist will hand out, may belong to a checkpoint that is
     * still retained (Flink's truncation can overlap the latest completed checkpoint when its
     * {@code confirm} was skipped): while the writer lives its file is released once that
     * checkpoint is subsumed; when the writer closes ({@code closing}) it is handed over (see
     * {@link #close()}).
     */
    @GuardedBy("this")
    private void drop(ChangeSetState state, boolean closing) {
        if (state.status == ChangeSetState.Status.UPLOADED && !state.confirmed) {
            StreamStateHandle file = state.result.file();
            long lastCheckpoint = Math.max(state.lastCheckpoint, capturingCheckpoint(state));
            if (closing) {
                // a pending persist that captured it is failed by close(): only results already
                // handed out count
                if (state.lastCheckpoint != Long.MIN_VALUE) {
                    registry.handOverUnlessSubsumed(file, state.lastCheckpoint);
                } else {
                    registry.release(file);
                }
            } else if (lastCheckpoint == Long.MIN_VALUE) {
                registry.release(file);
            } else {
                registry.releaseWhenSubsumed(file, lastCheckpoint, this);
            }
        } else if (state.status == ChangeSetState.Status.NOT_UPLOADED) {
            notUploadedBytes -= state.rawBytes;
        }
        // UPLOADING: on arrival the result is released unless a pending persist captured it
    }

    /** The highest checkpoint of a pending persist that will hand the change set out, or MIN. */
    @GuardedBy("this")
    private long capturingCheckpoint(ChangeSetState state) {
        long result = Long.MIN_VALUE;
        for (PendingPersist persist : pending) {
            for (ChangeSetState captured : persist.changeSets) {
                if (captured == state) {
                    result = Math.max(result, persist.checkpointId);
                }
            }
        }
        return result;
    }

    @GuardedBy("this")
    private boolean isLive(ChangeSetState state) {
        return changeSets.get(state.sequenceNumber) == state;
    }

    private static void add(List<UploadTask> tasks, UploadTask task) {
        if (task != null) {
            tasks.add(task);
        }
    }

    private static long number(SequenceNumber sqn) {
        return ((SequenceNumber.GenericSequenceNumber) sqn).number;
    }

    @GuardedBy("this")
    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("Changelog writer " + logId + " is closed");
        }
    }

    // ------------------------------------------------------------------------------------------
    // Test support

    /** Verifies the invariants listed in the class comment; for tests. */
    public synchronized void checkInvariants() {
        long bytes = 0;
        for (ChangeSetState state : changeSets.values()) {
            if (state.sequenceNumber < lowestSqn || state.sequenceNumber >= activeSqn) {
                throw new IllegalStateException("Change set out of range: " + state);
            }
            if (state.status == ChangeSetState.Status.NOT_UPLOADED) {
                bytes += state.rawBytes;
            }
            if (state.status == ChangeSetState.Status.UPLOADED && state.result == null) {
                throw new IllegalStateException("Uploaded change set without result: " + state);
            }
            if (state.confirmed
                    && (state.status != ChangeSetState.Status.UPLOADED
                            || state.changeSet != null)) {
                throw new IllegalStateException("Inconsistent confirmed change set: " + state);
            }
        }
        if (bytes != notUploadedBytes) {
            throw new IllegalStateException(
                    "notUploadedBytes " + notUploadedBytes + " but counted " + bytes);
        }
        for (PendingPersist persist : pending) {
            if (persist.allUploaded()) {
                throw new IllegalStateException("Completable persist still pending");
            }
        }
    }

    public synchronized int retainedChangeSets() {
        return changeSets.size();
    }

    public synchronized long notUploadedBytes() {
        return notUploadedBytes + activeBytes;
    }

    @Override
    public String toString() {
        return "DfsChangelogWriter{" + logId + ", " + keyGroupRange + "}";
    }
}
