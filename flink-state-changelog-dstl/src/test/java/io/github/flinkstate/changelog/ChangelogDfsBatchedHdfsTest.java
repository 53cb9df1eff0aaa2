package io.github.flinkstate.changelog;

import io.github.flinkstate.testing.hdfs.MiniDfsExtension;
import java.io.File;
import java.util.Collections;
import java.util.List;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.testutils.junit.extensions.parameterized.ParameterizedTestExtension;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameters;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Flink's conformance suite for ChangelogStateBackend(HashMap) with the DSTL on a real HDFS
 * (Hadoop's MiniDFSCluster, started by the shared kit's {@link MiniDfsExtension}), reached through
 * Flink's {@code hdfs://} file system: uploads, downloads through the reader's cache, and deletions
 * all go over HDFS.
 */
@ExtendWith(ParameterizedTestExtension.class)
class ChangelogDfsBatchedHdfsTest extends ChangelogDfsBatchedConformanceBase {

    @RegisterExtension static final MiniDfsExtension HDFS = new MiniDfsExtension();

    @Parameters
    public static List<Object[]> parameters() {
        return Collections.singletonList(new Object[0]);
    }

    @Override
    protected Path basePath(File dir) {
        // same relative layout as the local variant, but on HDFS
        return new Path(HDFS.uri() + "/dstl/" + dir.getName());
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
