package io.github.flinkstate.changelog.upload;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.changelog.ChangelogStateHandleStreamImpl;

/**
 * A persist call waiting for the uploads of its change sets.
 *
 * <p>Thread safety: guarded by the owning {@link DfsChangelogWriter}'s lock; the future is
 * completed outside of it.
 *
 * <p>Invariant: {@code changeSets} is the sequence-number-ordered range captured at the call;
 * truncation does not change it ("ongoing persist calls are not affected").
 */
final class PendingPersist {

    final long checkpointId;
    final List<ChangeSetState> changeSets;
    final CompletableFuture<SnapshotResult<ChangelogStateHandleStreamImpl>> future =
            new CompletableFuture<>();

    PendingPersist(long checkpointId, List<ChangeSetState> changeSets) {
        this.checkpointId = checkpointId;
        this.changeSets = changeSets;
    }

    boolean allUploaded() {
        for (ChangeSetState state : changeSets) {
            if (state.status != ChangeSetState.Status.UPLOADED) {
                return false;
            }
        }
        return true;
    }

    boolean dependsOn(List<ChangeSetState> states) {
        for (ChangeSetState state : states) {
            for (ChangeSetState mine : changeSets) {
                if (mine == state) {
                    return true;
                }
            }
        }
        return false;
    }
}
