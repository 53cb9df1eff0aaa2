package io.github.flinkstate.changelog.upload;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;

/**
 * One writer's request to upload some of its change sets. The scheduler puts the change sets of
 * many tasks (of all writers of the job on this TaskManager) into one file.
 *
 * <p>Encoding (ordering and compressing each change set into a segment) happens once, as early as
 * the scheduler asks ({@link #encode}): the scheduler starts it when the task is queued, so the CPU
 * work overlaps the batching wait instead of following it.
 *
 * <p>Thread safety: the change sets and callback are immutable; encoding is synchronized per change
 * set (a second caller waits for the running encoding). The callback is invoked exactly once, from
 * an upload thread, with either one result per change set (same order) or the final failure.
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

    /**
     * The encoded segments of the change sets (same order); each change set is encoded once (see
     * {@link ChangeSet#encode}). A failed encoding throws again on the next call.
     */
    List<byte[]> encode(boolean compress) throws IOException {
        List<byte[]> encoded = new ArrayList<>(changeSets.size());
        for (ChangeSet changeSet : changeSets) {
            encoded.add(changeSet.encode(compress));
        }
        return encoded;
    }

    void complete(List<UploadResult> results, Throwable failure) {
        callback.accept(results, failure);
    }
}
