package org.apache.flink.runtime.state;

import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.TestTemplate;

/**
 * {@link StateBackendTestBase} for backends used under Flink's own {@code ChangelogStateBackend},
 * minus the two tests that Flink's changelog backend fails whatever its delegate and storage (same
 * failures with Flink's in-memory changelog storage over plain RocksDB): {@code
 * testRestoreWithWrongKeySerializer} (the changelog restore does not check the key serializer:
 * EOFException instead of StateMigrationException) and {@code testMapStateWithNullValue} (its
 * map-state logger cannot serialize null values).
 *
 * <p>Used by the LRU cache's and the DSTL module's conformance tests (the latter through this
 * module's test jar). In Flink's package only because one overridden test method is
 * package-private.
 */
public abstract class ChangelogWrappedStateBackendTestBase
        extends StateBackendTestBase<AbstractStateBackend> {

    @Override
    @TestTemplate
    @Disabled(
            "Flink's ChangelogStateBackend does not check the key serializer on changelog restore")
    void testRestoreWithWrongKeySerializer() {}

    @Override
    @TestTemplate
    @Disabled("Flink's ChangelogStateBackend cannot log null map values")
    public void testMapStateWithNullValue() {}
}
