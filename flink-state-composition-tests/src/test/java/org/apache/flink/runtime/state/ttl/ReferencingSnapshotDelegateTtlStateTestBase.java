package org.apache.flink.runtime.state.ttl;

import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.TestTemplate;

/**
 * {@link TtlStateTestBase} for stacks whose innermost backend is the disaggregated one, minus the
 * two "snapshot cleanup" tests (16 cases): they expect a snapshot to drop values that expired
 * before it ({@code cleanupFullSnapshot}), which the disaggregated backend's checkpoints, naming
 * its engine files as they are, cannot do without rewriting them; its own TTL suite disables them
 * for the same reason (docs/disaggregated.md). What sits in front of it (the LRU cache) does not
 * change that.
 *
 * <p>In Flink's package only because the overridden test methods are package-private.
 */
public abstract class ReferencingSnapshotDelegateTtlStateTestBase extends TtlStateTestBase {

    @Override
    @TestTemplate
    @Disabled("the disaggregated delegate's snapshots reference its files: expired values stay")
    void testMultipleKeysWithSnapshotCleanup() {}

    @Override
    @TestTemplate
    @Disabled("the disaggregated delegate's snapshots reference its files: expired values stay")
    void testMultipleNamespacesWithSnapshotCleanup() {}
}
