package io.github.flinkstate.disagg.backend.metrics;

/**
 * What the latest checkpoint or savepoint handle of one keyed backend referenced: engine files
 * (shared state), their bytes with the meta stream, and the bytes that no earlier handle of this
 * backend had referenced (what the checkpoint really added). Written by the asynchronous snapshot
 * part, read by metric reporters.
 *
 * <p>Thread safety: thread-safe; the three figures of one checkpoint are published together.
 */
public final class CheckpointFigures {

    private volatile long[] latest = {0, 0, 0};

    /** Records the handle just produced. */
    public void record(long files, long bytes, long newBytes) {
        latest = new long[] {files, bytes, newBytes};
    }

    public long files() {
        return latest[0];
    }

    public long bytes() {
        return latest[1];
    }

    public long newBytes() {
        return latest[2];
    }
}
