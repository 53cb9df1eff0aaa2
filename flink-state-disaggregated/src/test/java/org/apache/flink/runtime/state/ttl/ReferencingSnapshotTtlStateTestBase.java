package org.apache.flink.runtime.state.ttl;

import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.TestTemplate;

/**
 * {@link TtlStateTestBase} minus the two "snapshot cleanup" tests: they expect a checkpoint to hold
 * no value that expired before it ({@code cleanupFullSnapshot}, which Flink applies to full
 * snapshots only; plain RocksDB incremental checkpoints fail these tests too). A checkpoint of this
 * backend references the engine's files as they are, so an expired value stays in it until a
 * compaction has rewritten its file (the TTL compaction filter drops it then). {@link
 * CompactingSnapshotTtlStateTestBase} runs the same suite with a compaction before every snapshot,
 * where the two tests pass.
 *
 * <p>In Flink's package only because the overridden test methods are package-private.
 */
public abstract class ReferencingSnapshotTtlStateTestBase extends TtlStateTestBase {

    @Override
    @TestTemplate
    @Disabled("a checkpoint references files as they are: expired values stay until compaction")
    void testMultipleKeysWithSnapshotCleanup() {}

    @Override
    @TestTemplate
    @Disabled("a checkpoint references files as they are: expired values stay until compaction")
    void testMultipleNamespacesWithSnapshotCleanup() {}
}
