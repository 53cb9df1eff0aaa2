package io.github.flinkstate.disagg.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.testutil.LsmModelRunner;
import java.io.File;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.fs.hdfs.HadoopFileSystem;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The seeded model tests with the primary directory on a real HDFS ({@link MiniDFSCluster}),
 * reached through Flink's {@link HadoopFileSystem} wrapper.
 */
class LsmStoreHdfsModelTest {

    @TempDir static File tmp;

    private static MiniDFSCluster cluster;
    private static FileSystem fs;
    private static Path base;

    @BeforeAll
    static void startHdfs() throws Exception {
        Configuration conf = new Configuration();
        conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, new File(tmp, "hdfs").getAbsolutePath());
        cluster = new MiniDFSCluster.Builder(conf).numDataNodes(1).build();
        cluster.waitActive();
        org.apache.hadoop.fs.FileSystem hdfs = cluster.getFileSystem();
        fs = new HadoopFileSystem(hdfs);
        base = new Path(hdfs.getUri().toString() + "/lsm");
    }

    @AfterAll
    static void stopHdfs() {
        if (cluster != null) {
            cluster.shutdown();
        }
    }

    @Test
    void singleStore_onHdfs_matchesTreeMap() throws Exception {
        LsmModelRunner r = new LsmModelRunner(fs, new Path(base, "single"), 101).sizeScale(3);
        r.runSingleStore(3_000);
        assertThat(r.checks()).isGreaterThan(300);
        assertThat(base.toUri().getScheme()).isEqualTo("hdfs");
    }

    @Test
    void rescale_onHdfs_matchesTreeMap() throws Exception {
        LsmModelRunner r = new LsmModelRunner(fs, new Path(base, "rescale"), 202).sizeScale(3);
        r.runRescale(1_500);
    }
}
