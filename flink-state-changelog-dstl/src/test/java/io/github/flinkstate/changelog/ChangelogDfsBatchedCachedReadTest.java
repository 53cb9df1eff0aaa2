package io.github.flinkstate.changelog;

import io.github.flinkstate.testing.fs.InjectingFileSystem;
import java.io.File;
import java.util.Collections;
import java.util.List;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.testutils.junit.extensions.parameterized.ParameterizedTestExtension;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameters;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Flink's conformance suite with the DSTL on the shared kit's {@code inject://} (no faults
 * injected), which claims to be a distributed file system, so every restore goes through the
 * reader's parallel prefetch and local download cache.
 */
@ExtendWith(ParameterizedTestExtension.class)
class ChangelogDfsBatchedCachedReadTest extends ChangelogDfsBatchedConformanceBase {

    @Parameters
    public static List<Object[]> parameters() {
        return Collections.singletonList(new Object[0]);
    }

    @Override
    protected Path basePath(File dir) {
        return InjectingFileSystem.shared().path(dir);
    }

    @Override
    protected StateBackend createDelegate() {
        return new HashMapStateBackend();
    }

    @Override
    protected boolean isSerializerPresenceRequiredOnRestore() {
        return true;
    }
}
