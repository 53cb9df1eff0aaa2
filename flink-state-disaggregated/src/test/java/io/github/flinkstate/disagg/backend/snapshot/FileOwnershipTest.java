package io.github.flinkstate.disagg.backend.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import org.junit.jupiter.api.Test;

/** The contract of {@link FileOwnership}: exactly one party deletes each engine file. */
class FileOwnershipTest {

    private final FileOwnership ownership = new FileOwnership();

    @Test
    void obsoleteBeforeTheDiscard_theDiscardDeletes() {
        ownership.handedOver(1, Set.of("f"));
        assertThat(ownership.obsolete("f")).as("the store must not delete it yet").isFalse();
        assertThat(ownership.discarded(1)).containsExactly("f");
        assertThat(ownership.isHandedOver("f")).isFalse();
    }

    @Test
    void discardBeforeObsolete_theStoreDeletes() {
        ownership.handedOver(1, Set.of("f"));
        assertThat(ownership.discarded(1)).as("still live: back to the store").isEmpty();
        assertThat(ownership.obsolete("f")).isTrue();
    }

    @Test
    void namedByAnotherPendingHandle_staysHandedOver() {
        ownership.handedOver(1, Set.of("f"));
        ownership.handedOver(2, Set.of("f"));
        assertThat(ownership.obsolete("f")).isFalse();
        assertThat(ownership.discarded(2)).isEmpty();
        assertThat(ownership.isHandedOver("f")).isTrue();
        assertThat(ownership.discarded(1)).containsExactly("f");
    }

    @Test
    void completed_flinkOwnsIt_nobodyElseDeletes() {
        ownership.handedOver(1, Set.of("f"));
        ownership.completed(1);
        assertThat(ownership.discarded(1)).isEmpty();
        assertThat(ownership.obsolete("f")).isFalse();
    }

    @Test
    void obsoleteAndOnlyInAnAbortedCheckpoint_settledOnceNoLateDiscardIsAwaited() {
        ownership.handedOver(1, Set.of("f")); // acknowledged, registered, then aborted
        assertThat(ownership.obsolete("f")).isFalse();
        for (long id = 2; id < 2 + FileOwnership.LATE_DISCARDS; id++) {
            ownership.handedOver(id, Set.of("g" + id)); // aborted too: each may be discarded late
        }
        long completed = 2 + FileOwnership.LATE_DISCARDS;
        ownership.handedOver(completed, Set.of("h"));
        ownership.completed(completed);
        assertThat(ownership.isHandedOver("f"))
                .as("older than the newest %d unsettled checkpoints: the registry owns it")
                .isFalse();
        assertThat(ownership.discarded(1)).isEmpty();
        assertThat(ownership.isHandedOver("g2")).as("still awaited").isTrue();
    }

    /**
     * A handle discarded on the TaskManager never reached the JobManager, also when the discard
     * comes after a later checkpoint completed (a cancelled snapshot whose upload ignored the
     * interrupt and ended late). Before, that completion forgot the older handle's files: one the
     * store had dropped was deleted by nobody, and one still live stayed "handed over", so the
     * store never deleted it either.
     */
    @Test
    void aLateDiscardAfterALaterCompletion_stillGivesTheFilesBack() {
        ownership.handedOver(1, Set.of("dropped", "live"));
        assertThat(ownership.obsolete("dropped")).isFalse();
        ownership.handedOver(2, Set.of("g"));
        ownership.completed(2);
        assertThat(ownership.discarded(1)).containsExactly("dropped");
        assertThat(ownership.isHandedOver("live")).isFalse();
        assertThat(ownership.obsolete("live")).as("the store deletes it when it drops it").isTrue();
    }

    /**
     * A file that stays live while the job runs (a bottom-level file of a quiet key range) is named
     * by every checkpoint. Once a completed checkpoint named it, Flink owns it, so which later
     * checkpoints name it changes nothing; before, each of them added its id to what this object
     * holds for the file, a set that grew by one per checkpoint for the job's lifetime.
     */
    @Test
    void aFileNamedByEveryCheckpoint_holdsNoMemoryPerCheckpoint() {
        for (long id = 1; id <= 10_000; id++) {
            ownership.handedOver(id, Set.of("long-lived"));
            ownership.completed(id);
        }
        assertThat(ownership.checkpointIdsHeld()).isLessThanOrEqualTo(1);
        ownership.handedOver(10_001, Set.of("long-lived"));
        assertThat(ownership.discarded(10_001)).isEmpty();
        assertThat(ownership.isHandedOver("long-lived")).as("Flink owns it").isTrue();
        assertThat(ownership.obsolete("long-lived")).as("Flink's registry deletes it").isFalse();
    }

    /**
     * A confirmed file named again by a later checkpoint, and dropped by the store before that
     * checkpoint completes (a compaction between the snapshot and its completion notice, the usual
     * order): the completion used to confirm it again, and as the store never asks about a dropped
     * file again, its name stayed held until the backend was disposed.
     */
    @Test
    void aConfirmedFileDroppedWhileALaterCheckpointIsPending_isForgotten() {
        ownership.handedOver(1, Set.of("f"));
        ownership.completed(1);
        ownership.handedOver(2, Set.of("f"));
        assertThat(ownership.obsolete("f")).as("Flink's registry deletes it").isFalse();
        ownership.completed(2);
        assertThat(ownership.isHandedOver("f")).as("its name is still held").isFalse();
        assertThat(ownership.filesHeld()).isZero();
    }

    /**
     * Checkpoints that this subtask acknowledged and the JobManager then aborted, with none
     * completing (another task keeps timing out): each used to add its id for every live file, a
     * set per file that grew with every checkpoint until one completed. Now an abort keeps, like a
     * completion, only the newest {@link FileOwnership#LATE_DISCARDS} unsettled checkpoints; the
     * older ones' files are Flink's (it registered them on the acknowledgement).
     */
    @Test
    void checkpointsAbortedOneAfterAnother_holdABoundedNumberOfIds() {
        for (long id = 1; id <= 10_000; id++) {
            ownership.handedOver(id, Set.of("live", "new-" + id));
            ownership.aborted(id);
        }
        assertThat(ownership.checkpointIdsHeld())
                .isLessThanOrEqualTo(2 * FileOwnership.LATE_DISCARDS);
        assertThat(ownership.obsolete("new-9999")).isFalse();
        assertThat(ownership.discarded(9_999))
                .as("a late discard of a recent one still gives its files back")
                .containsExactly("new-9999");
        assertThat(ownership.obsolete("new-1")).as("registered: Flink's to delete").isFalse();
        assertThat(ownership.isHandedOver("new-1")).isFalse();
        assertThat(ownership.isHandedOver("live")).as("Flink owns it").isTrue();
        assertThat(ownership.obsolete("live")).isFalse();
    }

    @Test
    void neverHandedOver_theStoreDeletes() {
        assertThat(ownership.obsolete("f")).isTrue();
    }
}
