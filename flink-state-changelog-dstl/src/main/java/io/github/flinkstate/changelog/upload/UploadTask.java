package io.github.flinkstate.changelog.upload;

import java.util.List;
import java.util.function.BiConsumer;

/**
 * One writer's request to upload some of its change sets. The scheduler puts the change sets of
 * many tasks (of all writers of the job on this TaskManager) into one file.
 *
 * <p>Thread safety: immutable; the callback is invoked exactly once, from an upload thread, with
 * either one result per change set (same order) or the final failure.
 */
public final class UploadTask {

    private final List<ChangeSet> changeSets;
    private final long rawBytes;
    private final BiConsumer<List<UploadResult>, Throwable> callback;

    public UploadTask(
            List<ChangeSet> changeSets, BiConsumer<List<UploadResult>, Throwable> callback) {
        this.changeSets = List.copyOf(changeSets);
        this.rawBytes = changeSets.stream().mapToLong(ChangeSet::rawBytes).sum();
        this.callback = callback;
    }

    public List<ChangeSet> changeSets() {
        return changeSets;
    }

    public long rawBytes() {
        return rawBytes;
    }

    void complete(List<UploadResult> results, Throwable failure) {
        callback.accept(results, failure);
    }
}
