package io.github.flinkstate.disagg.engine.fs;

import io.github.flinkstate.disagg.engine.version.FileMeta;

/**
 * Decides which obsolete files the engine may delete itself. A file is offered here once, when no
 * version, open reader, running compaction or unreleased snapshot of the store refers to it.
 * Returning {@code false} means the engine never deletes it (someone else owns it, e.g. Flink's
 * SharedStateRegistry after a checkpoint included it, or the owner decides later, as the keyed
 * backend does for a file named by a checkpoint whose fate is not known yet).
 *
 * <p>Thread safety: implementations must be thread-safe (called from background threads and from
 * the thread that releases the last reference).
 */
@FunctionalInterface
public interface FileDeletionPolicy {

    boolean mayDelete(FileMeta file);

    /**
     * The default: delete only files this store instance wrote; restored (foreign) files belong to
     * the snapshots they came from.
     */
    static FileDeletionPolicy ownedFilesOnly() {
        return FileMeta::createdHere;
    }

    /** Never delete anything (useful when all files are handed to an external registry). */
    static FileDeletionPolicy never() {
        return f -> false;
    }
}
