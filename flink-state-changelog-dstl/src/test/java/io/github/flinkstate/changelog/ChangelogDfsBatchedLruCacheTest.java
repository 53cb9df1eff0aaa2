package io.github.flinkstate.changelog;

import io.github.flinkstate.lru.StateBackendWrapperWithLRUCache;
import java.util.Collections;
import java.util.List;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.testutils.junit.extensions.parameterized.ParameterizedTestExtension;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameters;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Flink's state backend conformance suite: ChangelogStateBackend over our LRU cache (16 entries, so
 * nearly every access evicts to RocksDB) on our DSTL.
 */
@ExtendWith(ParameterizedTestExtension.class)
class ChangelogDfsBatchedLruCacheTest extends ChangelogDfsBatchedConformanceBase {

    @Parameters
    public static List<Object[]> parameters() {
        return Collections.singletonList(new Object[0]);
    }

    @Override
    protected StateBackend createDelegate() {
        return new StateBackendWrapperWithLRUCache(new EmbeddedRocksDBStateBackend(true), 16);
    }

    @Override
    protected boolean isSerializerPresenceRequiredOnRestore() {
        return false;
    }
}
