package org.apache.flink.runtime.state;

import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.TestTemplate;

/**
 * {@link StateBackendTestBase} minus the two tests that Flink's own {@code ChangelogStateBackend}
 * fails with <em>any</em> changelog storage (checked with Flink's {@code
 * InMemoryStateChangelogStorage}: identical failures), so they say nothing about our DSTL:
 *
 * <ul>
 *   <li>{@code testRestoreWithWrongKeySerializer}: the changelog restore replays changes without
 *       checking the key serializer and fails with an EOFException instead of a
 *       StateMigrationException;
 *   <li>{@code testMapStateWithNullValue}: the changelog map-state logger cannot serialize null
 *       values.
 * </ul>
 *
 * <p>It lives in Flink's package only because one of the overridden methods is package-private.
 */
public abstract class ChangelogStateBackendTestBaseAdapter
        extends StateBackendTestBase<AbstractStateBackend> {

    @Override
    @TestTemplate
    @Disabled("Flink's ChangelogStateBackend does not check the key serializer on changelog restore")
    void testRestoreWithWrongKeySerializer() {}

    @Override
    @TestTemplate
    @Disabled("Flink's ChangelogStateBackend cannot log null map values")
    public void testMapStateWithNullValue() {}
}
