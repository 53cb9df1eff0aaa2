package io.github.flinkstate.changelog;

import java.util.Collections;
import java.util.List;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.testutils.junit.extensions.parameterized.ParameterizedTestExtension;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameters;
import org.junit.jupiter.api.extension.ExtendWith;

/** Flink's state backend conformance suite: ChangelogStateBackend(RocksDB) on our DSTL. */
@ExtendWith(ParameterizedTestExtension.class)
class ChangelogDfsBatchedRocksDbTest extends ChangelogDfsBatchedConformanceBase {

    @Parameters
    public static List<Object[]> parameters() {
        return Collections.singletonList(new Object[0]);
    }

    @Override
    protected StateBackend createDelegate() {
        return new EmbeddedRocksDBStateBackend(true);
    }

    @Override
    protected boolean isSafeToReuseKVState() {
        return true;
    }

    @Override
    protected boolean isSerializerPresenceRequiredOnRestore() {
        return false;
    }
}
