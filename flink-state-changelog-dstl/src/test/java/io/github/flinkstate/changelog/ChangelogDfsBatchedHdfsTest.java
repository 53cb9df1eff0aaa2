package io.github.flinkstate.changelog;

import java.io.File;
import java.nio.file.Files;
import java.util.Collections;
import java.util.List;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.testutils.junit.extensions.parameterized.ParameterizedTestExtension;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameters;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Flink's conformance suite for ChangelogStateBackend(HashMap) with the DSTL on a real HDFS
 * (Hadoop's {@link MiniDFSCluster}), reached through Flink's {@code hdfs://} file system: uploads,
 * downloads through the reader's cache, and deletions all go over HDFS.
 */
@ExtendWith(ParameterizedTestExtension.class)
class ChangelogDfsBatchedHdfsTest extends ChangelogDfsBatchedConformanceBase {

    private static MiniDFSCluster hdfs;
    private static String hdfsUri;

    @Parameters
    public static List<Object[]> parameters() {
        return Collections.singletonList(new Object[0]);
    }

    @BeforeAll
    static void startHdfs() throws Exception {
        File base = Files.createTempDirectory("dstl-hdfs").toFile();
        Configuration conf = new Configuration();
        conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, base.getAbsolutePath());
        hdfs = new MiniDFSCluster.Builder(conf).numDataNodes(1).build();
        hdfs.waitActive();
        hdfsUri = hdfs.getFileSystem().getUri().toString();
    }

    @AfterAll
    static void stopHdfs() {
        if (hdfs != null) {
            hdfs.shutdown();
        }
    }

    @Override
    protected Path basePath(File dir) {
        // same relative layout as the local variant, but on HDFS
        return new Path(hdfsUri + "/dstl/" + dir.getName());
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
