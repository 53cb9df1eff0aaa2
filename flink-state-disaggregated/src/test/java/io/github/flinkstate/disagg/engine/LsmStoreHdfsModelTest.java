package io.github.flinkstate.disagg.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.testutil.LsmModelRunner;
import io.github.flinkstate.testing.hdfs.MiniDfsExtension;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.fs.hdfs.HadoopFileSystem;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The seeded model tests with the primary directory on a real HDFS (Hadoop's MiniDFSCluster,
 * started by the test kit's {@link MiniDfsExtension}), reached through Flink's {@link
 * HadoopFileSystem} wrapper.
 */
class LsmStoreHdfsModelTest {

    @RegisterExtension static final MiniDfsExtension HDFS = new MiniDfsExtension();

    @Test
    void singleStore_onHdfs_matchesTreeMap() throws Exception {
        Path base = HDFS.path("/lsm");
        LsmModelRunner r =
                new LsmModelRunner(HDFS.fileSystem(), new Path(base, "single"), 101).sizeScale(3);
        r.runSingleStore(3_000);
        assertThat(r.checks()).isGreaterThan(300);
        assertThat(base.toUri().getScheme()).isEqualTo("hdfs");
    }

    @Test
    void rescale_onHdfs_matchesTreeMap() throws Exception {
        LsmModelRunner r =
                new LsmModelRunner(HDFS.fileSystem(), new Path(HDFS.path("/lsm"), "rescale"), 202)
                        .sizeScale(3);
        r.runRescale(1_500);
    }
}
