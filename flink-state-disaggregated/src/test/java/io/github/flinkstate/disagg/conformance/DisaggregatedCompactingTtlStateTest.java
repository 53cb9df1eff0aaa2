package io.github.flinkstate.disagg.conformance;

import io.github.flinkstate.disagg.DisaggregatedOptions;
import io.github.flinkstate.disagg.DisaggregatedStateBackend;
import io.github.flinkstate.disagg.backend.DisaggregatedKeyedStateBackend;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.flink.runtime.state.CheckpointableKeyedStateBackend;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.ttl.CompactingSnapshotTtlStateTestBase;
import org.junit.jupiter.api.io.TempDir;

/**
 * Flink's TTL suite over the disaggregated backend with a full compaction before every snapshot,
 * plus the compaction-filter tests of the base class: expired entries of states with cleanup in the
 * background are dropped by compactions (and the two snapshot-cleanup tests pass). With row caches
 * on: a compaction that drops expired entries must make them forget what they read before.
 */
public class DisaggregatedCompactingTtlStateTest extends CompactingSnapshotTtlStateTestBase {

    @TempDir Path tmp;

    @Override
    protected StateBackend createBackend() {
        try {
            return new DisaggregatedStateBackend()
                    .with(
                            DisaggregatedOptions.PRIMARY_DIRECTORY,
                            Files.createTempDirectory(tmp, "primary").toUri().toString())
                    .with(DisaggregatedOptions.ROW_CACHE_RATIO, 0.5);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    protected void compactAll(CheckpointableKeyedStateBackend<?> backend) throws IOException {
        ((DisaggregatedKeyedStateBackend<?>) backend).compactAll();
    }
}
