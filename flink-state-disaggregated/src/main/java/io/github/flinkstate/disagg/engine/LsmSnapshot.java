package io.github.flinkstate.disagg.engine;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A consistent point-in-time image of a store: the manifest bytes and the files it lists. While
 * unreleased it pins those files (the engine will not delete them). The store can be reopened from
 * {@link #manifest()} alone; the files are read where they are.
 *
 * <p>Thread safety: immutable; {@link #release()} is idempotent and thread-safe.
 */
public final class LsmSnapshot implements AutoCloseable {

    private final byte[] manifest;
    private final List<String> files;
    private final Map<String, Long> sizes;
    private final long lastSeq;
    private final Runnable onRelease;
    private final AtomicBoolean released = new AtomicBoolean();

    LsmSnapshot(byte[] manifest, Map<String, Long> sizes, long lastSeq, Runnable onRelease) {
        this.manifest = manifest;
        this.sizes = Map.copyOf(sizes);
        this.files = List.copyOf(new TreeMap<>(sizes).keySet());
        this.lastSeq = lastSeq;
        this.onRelease = onRelease;
    }

    /** The encoded manifest (docs/format/disagg-manifest.md). */
    public byte[] manifest() {
        return manifest.clone();
    }

    /** Full paths of every file the snapshot references. */
    public List<String> files() {
        return files;
    }

    /** Exact size in bytes of each referenced file, by full path. */
    public Map<String, Long> fileSizes() {
        return sizes;
    }

    public long lastSeq() {
        return lastSeq;
    }

    /** Stops pinning the files; they may then be deleted if the deletion policy allows. */
    public void release() {
        if (released.compareAndSet(false, true)) {
            onRelease.run();
        }
    }

    @Override
    public void close() {
        release();
    }
}
