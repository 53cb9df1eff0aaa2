package io.github.flinkstate.disagg.conformance;

import io.github.flinkstate.disagg.DisaggregatedOptions;
import io.github.flinkstate.disagg.DisaggregatedStateBackend;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.ttl.ReferencingSnapshotTtlStateTestBase;
import org.apache.flink.runtime.state.ttl.StateBackendTestContext;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.junit.jupiter.api.io.TempDir;

/**
 * Flink's TTL suite over the disaggregated backend (expired values dropped on access; the two
 * snapshot-cleanup tests are disabled, see the base class).
 */
public class DisaggregatedTtlStateTest extends ReferencingSnapshotTtlStateTestBase {

    @TempDir Path tmp;

    @Override
    protected StateBackendTestContext createStateBackendTestContext(TtlTimeProvider timeProvider) {
        return new StateBackendTestContext(timeProvider) {
            @Override
            protected StateBackend createStateBackend() {
                try {
                    return new DisaggregatedStateBackend()
                            .with(
                                    DisaggregatedOptions.PRIMARY_DIRECTORY,
                                    Files.createTempDirectory(tmp, "primary").toUri().toString());
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        };
    }
}
