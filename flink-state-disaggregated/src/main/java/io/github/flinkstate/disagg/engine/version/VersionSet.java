package io.github.flinkstate.disagg.engine.version;

import io.github.flinkstate.disagg.engine.key.Bytes;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Owns the current {@link Version}, the set of versions still pinned by readers, compactions or
 * snapshots, and the per-file reference counts that decide when a file becomes obsolete.
 *
 * <p>Thread safety: thread-safe; all state is guarded by {@code this}. The obsolete-file callback
 * runs outside the lock.
 *
 * <p>Lifecycle of a file: added by an edit (refs++ for each new version listing it) -> versions
 * that list it are released (refs--) -> refs reaches 0 -> handed to the obsolete-file callback,
 * which asks the deletion policy whether the engine may delete it.
 *
 * <p>Invariants (checked by {@link #checkInvariants()}):
 *
 * <ol>
 *   <li>The current version is live and holds one reference on behalf of the version set.
 *   <li>Every live version has {@code refs > 0}; released versions are no longer live.
 *   <li>For every file in a live version, {@code file.refs} = number of live versions listing it.
 *   <li>A file is reported obsolete exactly once, when its count drops to zero.
 * </ol>
 */
public final class VersionSet {

    private final KeyGroupSpan span;
    private final Consumer<List<FileMeta>> obsoleteFiles;
    private final Set<Version> live = Collections.newSetFromMap(new IdentityHashMap<>());
    private Version current;

    public VersionSet(
            KeyGroupSpan span,
            List<List<FileMeta>> initial,
            Consumer<List<FileMeta>> obsoleteFiles) {
        this.span = span;
        this.obsoleteFiles = obsoleteFiles;
        List<List<FileMeta>> levels = new ArrayList<>();
        for (List<FileMeta> l : initial) {
            levels.add(new ArrayList<>(l));
        }
        sortLevels(levels);
        Version v = new Version(levels);
        v.checkInvariants(span);
        pin(v);
        current = v;
    }

    /** The current version with one more reference; pair with {@link #release}. */
    public synchronized Version acquire() {
        current.refs++;
        return current;
    }

    /** The current version without pinning it (only valid while holding this lock). */
    public synchronized Version current() {
        return current;
    }

    public void release(Version v) {
        release(v, obsoleteFiles);
    }

    /**
     * As {@link #release(Version)}, handing the files that become obsolete to {@code obsolete}
     * instead of this set's callback (a reader's release defers the deletes; see {@code LsmStore}).
     */
    public void release(Version v, Consumer<List<FileMeta>> obsolete) {
        List<FileMeta> dead;
        synchronized (this) {
            dead = unpin(v);
        }
        if (!dead.isEmpty()) {
            obsolete.accept(dead);
        }
    }

    /**
     * Puts each level in the order {@link Version} requires: L0 newest first (by largest sequence
     * number; a get stops at the first file holding its key), deeper levels by lower key.
     */
    private static void sortLevels(List<List<FileMeta>> levels) {
        if (!levels.isEmpty()) {
            levels.get(0).sort(Comparator.comparingLong(FileMeta::maxSeq).reversed());
        }
        for (int i = 1; i < levels.size(); i++) {
            levels.get(i)
                    .sort(Comparator.comparing(f -> f.effectiveRange().lower(), Bytes::compare));
        }
    }

    /** Applies an edit atomically and makes the result current. */
    public void install(VersionEdit edit) {
        List<FileMeta> dead;
        synchronized (this) {
            List<List<FileMeta>> levels = new ArrayList<>();
            for (List<FileMeta> l : current.levels()) {
                levels.add(new ArrayList<>(l));
            }
            for (VersionEdit.LevelFile r : edit.removed) {
                boolean ok = levels.get(r.level()).removeIf(f -> f == r.file());
                Version.check(ok, "removing file not in L" + r.level() + ": " + r.file());
            }
            for (VersionEdit.LevelFile a : edit.added) {
                levels.get(a.level()).add(a.file());
            }
            sortLevels(levels);
            Version next = new Version(levels);
            next.checkInvariants(span);
            pin(next);
            Version old = current;
            current = next;
            dead = unpin(old);
        }
        notifyObsolete(dead);
    }

    /**
     * The paths of the files of every live version. A path may have several entries (a file that
     * arrived through two handles with different clips), each with its own reference count: one
     * entry going obsolete does not make the file unused.
     */
    public synchronized Set<String> pathsInUse() {
        Set<String> paths = new HashSet<>();
        for (Version v : live) {
            for (FileMeta f : v.allFiles()) {
                paths.add(f.path());
            }
        }
        return paths;
    }

    /** Whether any live version lists a file at {@code path}. */
    public boolean isInUse(String path) {
        return pathsInUse().contains(path);
    }

    public synchronized int liveVersions() {
        return live.size();
    }

    public synchronized void checkInvariants() {
        Version.check(live.contains(current), "current not live");
        // per counter: entries of one file may share theirs (FileMeta#copiedTo(String, RefCount))
        Map<FileMeta.RefCount, Integer> counts = new IdentityHashMap<>();
        Map<FileMeta.RefCount, FileMeta> named = new IdentityHashMap<>();
        for (Version v : live) {
            Version.check(v.refs > 0, "live version with refs " + v.refs);
            for (FileMeta f : v.allFiles()) {
                counts.merge(f.refs(), 1, Integer::sum);
                named.putIfAbsent(f.refs(), f);
            }
        }
        for (Map.Entry<FileMeta.RefCount, Integer> e : counts.entrySet()) {
            Version.check(
                    e.getKey().count == e.getValue(),
                    "refcount "
                            + e.getKey().count
                            + " != "
                            + e.getValue()
                            + " for "
                            + named.get(e.getKey()));
        }
        current.checkInvariants(span);
    }

    private void pin(Version v) {
        v.refs = 1;
        live.add(v);
        for (FileMeta f : v.allFiles()) {
            f.refs().count++;
        }
    }

    private List<FileMeta> unpin(Version v) {
        Version.check(v.refs > 0, "release of a released version");
        if (--v.refs > 0) {
            return List.of();
        }
        live.remove(v);
        List<FileMeta> dead = new ArrayList<>();
        for (FileMeta f : v.allFiles()) {
            if (--f.refs().count == 0) {
                dead.add(f);
            }
        }
        return dead;
    }

    private void notifyObsolete(List<FileMeta> dead) {
        if (!dead.isEmpty()) {
            obsoleteFiles.accept(dead);
        }
    }
}
