package io.github.flinkstate.changelog.upload;

import javax.annotation.Nullable;

/**
 * The writer's bookkeeping for one sealed change set: its upload status and ownership.
 *
 * <p>Thread safety: not thread-safe; guarded by the owning {@link DfsChangelogWriter}'s lock.
 *
 * <p>Status machine: {@code NOT_UPLOADED -> UPLOADING -> UPLOADED}; a failed upload goes back to
 * {@code NOT_UPLOADED}; {@code reset} moves an {@code UPLOADED} change set that only the aborted
 * checkpoint received back to {@code NOT_UPLOADED}. Once {@code confirmed}, the result is final and
 * the change bytes are dropped; until then they are kept so that a reset can re-upload them.
 */
final class ChangeSetState {

    enum Status {
        NOT_UPLOADED,
        UPLOADING,
        UPLOADED
    }

    final long sequenceNumber;
    final long rawBytes;

    /** The changes, kept until confirmed or truncated so that a reset can re-upload them. */
    @Nullable ChangeSet changeSet;

    Status status = Status.NOT_UPLOADED;

    /** Identifies the upload in progress; results of older uploads are stale. */
    long uploadId;

    @Nullable UploadResult result;

    /** A checkpoint using the result completed: the JobManager owns the file. */
    boolean confirmed;

    /** The lowest checkpoint whose persist result included the current upload result. */
    long firstCheckpoint = Long.MAX_VALUE;

    /** The highest checkpoint whose persist result included the current upload result. */
    long lastCheckpoint = Long.MIN_VALUE;

    /** The result's size was already reported as incremental size of some checkpoint. */
    boolean reportedIncrementally;

    ChangeSetState(ChangeSet changeSet) {
        this.sequenceNumber = changeSet.sequenceNumber();
        this.rawBytes = changeSet.rawBytes();
        this.changeSet = changeSet;
    }

    @Override
    public String toString() {
        return "ChangeSet{sqn="
                + sequenceNumber
                + ", "
                + status
                + (confirmed ? ", confirmed" : "")
                + "}";
    }
}
