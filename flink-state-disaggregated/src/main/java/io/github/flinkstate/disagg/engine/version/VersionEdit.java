package io.github.flinkstate.disagg.engine.version;

import java.util.ArrayList;
import java.util.List;

/**
 * A change to the live file set (files added to / removed from levels), applied atomically by
 * {@link VersionSet#install}. Produced by flushes (add to L0) and compactions (remove inputs, add
 * outputs, or move a file down a level).
 *
 * <p>Thread safety: not thread-safe; built by one thread then handed over.
 */
public final class VersionEdit {

    /** A file at a level. */
    public record LevelFile(int level, FileMeta file) {}

    final List<LevelFile> added = new ArrayList<>();
    final List<LevelFile> removed = new ArrayList<>();

    public VersionEdit add(int level, FileMeta f) {
        added.add(new LevelFile(level, f));
        return this;
    }

    public VersionEdit remove(int level, FileMeta f) {
        removed.add(new LevelFile(level, f));
        return this;
    }

    public List<LevelFile> added() {
        return added;
    }

    public List<LevelFile> removed() {
        return removed;
    }
}
