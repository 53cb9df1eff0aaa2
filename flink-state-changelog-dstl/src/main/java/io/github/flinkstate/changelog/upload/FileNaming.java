package io.github.flinkstate.changelog.upload;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The latest checkpoint whose persist result (of any writer) named one uploaded DSTL file, shared
 * by the {@link UploadResult}s of all change sets in that file. The JobManager registers a file
 * under the checkpoints whose acknowledgements name it and deletes it once a later checkpoint
 * completed without naming it; a writer about to name the file for the first time uses this to see
 * whether that may have happened (see {@code DfsChangelogWriter#persist}).
 *
 * <p>Thread safety: thread-safe.
 */
final class FileNaming {

    private final AtomicLong lastNamed = new AtomicLong(Long.MIN_VALUE);

    /** A persist result for {@code checkpointId} names the file. */
    void named(long checkpointId) {
        lastNamed.accumulateAndGet(checkpointId, Math::max);
    }

    /** The latest checkpoint a result named the file for; {@code Long.MIN_VALUE} if none. */
    long lastNamed() {
        return lastNamed.get();
    }
}
