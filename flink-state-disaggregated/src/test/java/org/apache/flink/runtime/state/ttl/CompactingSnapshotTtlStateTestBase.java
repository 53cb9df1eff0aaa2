package org.apache.flink.runtime.state.ttl;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.RunnableFuture;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.runtime.state.CheckpointableKeyedStateBackend;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.StateBackend;
import org.junit.jupiter.api.TestTemplate;

/**
 * {@link TtlStateTestBase} for a backend whose snapshots reference its files as they are and whose
 * compactions drop expired entries (cleanup in the background): every snapshot is preceded by a
 * full compaction of the backend's store at the test's current time, so the suite's two "snapshot
 * cleanup" tests check what a checkpoint holds after the compaction filter ran (no entry that had
 * expired when the compaction ran). Their TTL config ({@code cleanupFullSnapshot()} on top of the
 * default cleanup in the background) asks for both; for such backends only the compaction filter
 * can remove an expired entry from a checkpoint. The other tests of the suite disable cleanup in
 * the background, so the compactions must not change them.
 *
 * <p>Adds tests of the compaction filter itself, in the style of the suite: with state visibility
 * {@code ReturnExpiredIfNotCleanedUp}, an expired value stays readable until something removes it,
 * so a value that reads as empty right after a compaction (and whose unwrapped original state is
 * empty) was removed by the compaction, and one that is still there was kept by it.
 *
 * <p>In Flink's package only because the test context's snapshot method and some fields of the test
 * contexts are package-private.
 */
public abstract class CompactingSnapshotTtlStateTestBase extends TtlStateTestBase {

    /** The backend under test. */
    protected abstract StateBackend createBackend();

    /** Compacts the whole store of {@code backend} now (every entry passes the filter). */
    protected abstract void compactAll(CheckpointableKeyedStateBackend<?> backend) throws Exception;

    @Override
    protected StateBackendTestContext createStateBackendTestContext(TtlTimeProvider timeProvider) {
        return new StateBackendTestContext(timeProvider) {
            @Override
            protected StateBackend createStateBackend() {
                return createBackend();
            }

            @Override
            RunnableFuture<SnapshotResult<KeyedStateHandle>> triggerSnapshot() throws Exception {
                compactAll(getKeyedStateBackend());
                return super.triggerSnapshot();
            }
        };
    }

    private void compactAt(long time) throws Exception {
        timeProvider.time = time;
        compactAll(sbetc.getKeyedStateBackend());
    }

    private StateTtlConfig relaxedWithCleanupInBackground() {
        return getConfBuilder(TTL)
                .setStateVisibility(StateTtlConfig.StateVisibility.ReturnExpiredIfNotCleanedUp)
                .build();
    }

    private void assertKeptByCompaction(String key) throws Exception {
        sbetc.setCurrentKey(key);
        assertThat(ctx().getOriginal())
                .withFailMessage("Unexpired original state of " + key + " should be available")
                .isNotEqualTo(ctx().emptyValue);
    }

    private void assertDroppedByCompaction(String key) throws Exception {
        sbetc.setCurrentKey(key);
        assertThat(ctx().isOriginalEmptyValue())
                .withFailMessage("Expired original state of " + key + " should be compacted away")
                .isTrue();
        assertThat(ctx().get()).withFailMessage(EXPIRED_UNAVAIL).isEqualTo(ctx().emptyValue);
    }

    @TestTemplate
    void testCompactionKeepsUnexpiredAndDropsExpiredState() throws Exception {
        initTest(relaxedWithCleanupInBackground());
        timeProvider.time = 0;
        sbetc.setCurrentKey("k1");
        ctx().update(ctx().updateEmpty);
        sbetc.setCurrentKey("k2");
        ctx().update(ctx().updateEmpty);

        compactAt(50);
        assertKeptByCompaction("k1");
        assertKeptByCompaction("k2");
        sbetc.setCurrentKey("k1");
        ctx().update(ctx().updateUnexpired); // last access 50

        compactAt(120); // k2 (last access 0) has expired, k1 has not
        assertKeptByCompaction("k1");
        assertThat(ctx().get())
                .withFailMessage(UPDATED_UNEXPIRED_AVAIL)
                .isEqualTo(ctx().getUnexpired);
        assertDroppedByCompaction("k2");

        compactAt(170);
        assertDroppedByCompaction("k1");
    }

    @TestTemplate
    void testCompactionDropsExpiredStateOfRestoredFiles() throws Exception {
        initTest(relaxedWithCleanupInBackground());
        timeProvider.time = 0;
        sbetc.setCurrentKey("k1");
        ctx().update(ctx().updateEmpty);
        timeProvider.time = 60;
        sbetc.setCurrentKey("k2");
        ctx().update(ctx().updateEmpty);

        // the restored store reads the checkpoint's files in place; compaction rewrites them
        takeAndRestoreSnapshot(StateBackendTestContext.NUMBER_OF_KEY_GROUPS);
        compactAt(120);
        assertDroppedByCompaction("k1");
        assertKeptByCompaction("k2");
        assertThat(ctx().get()).withFailMessage(UNEXPIRED_AVAIL).isEqualTo(ctx().getUpdateEmpty);
    }

    @TestTemplate
    void testNoCompactionFilterWithoutCleanupInBackground() throws Exception {
        initTest(
                getConfBuilder(TTL)
                        .setStateVisibility(
                                StateTtlConfig.StateVisibility.ReturnExpiredIfNotCleanedUp)
                        .disableCleanupInBackground()
                        .build());
        timeProvider.time = 0;
        sbetc.setCurrentKey("k1");
        ctx().update(ctx().updateEmpty);

        compactAt(500);
        // relaxed visibility: the expired value is still there, returned once and cleaned up by
        // this access (reading the original state of an expired aggregating state would already
        // run the TTL wrapper's logic, so only the wrapper is read here)
        sbetc.setCurrentKey("k1");
        assertThat(ctx().get()).withFailMessage(UNEXPIRED_AVAIL).isEqualTo(ctx().getUpdateEmpty);
    }
}
