package io.github.flinkstate.benchmarks.scenario.checkpoint;

import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import io.github.flinkstate.testing.fs.Latency;
import java.io.File;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;

/**
 * A remote DFS for the checkpoint-duration scenario: the test kit's JVM-wide {@code inject://} file
 * system with a fixed latency on every call a DFS answers over the network (create, close, open,
 * read, metadata) and one bandwidth shared by all reads and writes. Writes themselves only pay
 * bandwidth (a DFS client buffers them). Not thread-safe: install once, before the first run.
 */
public final class RemoteDfsProfile {

    private static final List<FsOp> ROUND_TRIPS =
            List.of(
                    FsOp.CREATE,
                    FsOp.CLOSE,
                    FsOp.OPEN,
                    FsOp.READ,
                    FsOp.STATUS,
                    FsOp.LIST,
                    FsOp.DELETE,
                    FsOp.RENAME,
                    FsOp.MKDIRS);

    private RemoteDfsProfile() {}

    /**
     * Sets the profile up and returns how a local directory is named as a checkpoint directory: its
     * {@code file://} URI when both values are 0, else its {@code inject://} URI.
     */
    public static Function<File, String> install(int latencyMillis, long bandwidthMBps) {
        if (latencyMillis <= 0 && bandwidthMBps <= 0) {
            return dir -> dir.toURI().toString();
        }
        InjectingFileSystem fs = InjectingFileSystem.shared();
        fs.reset();
        if (latencyMillis > 0) {
            for (FsOp op : ROUND_TRIPS) {
                fs.latency(op, Latency.fixed(Duration.ofMillis(latencyMillis)));
            }
        }
        if (bandwidthMBps > 0) {
            fs.bandwidth(bandwidthMBps * 1_000_000L);
        }
        return fs::uri;
    }
}
