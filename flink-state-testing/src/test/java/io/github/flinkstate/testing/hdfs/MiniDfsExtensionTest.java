package io.github.flinkstate.testing.hdfs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystem.WriteMode;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The extension starts a real HDFS that Flink reaches through {@code hdfs://} paths. */
@Timeout(120)
class MiniDfsExtensionTest {

    @RegisterExtension static final MiniDfsExtension HDFS = new MiniDfsExtension();

    @Test
    void flinkResolvesTheClustersPaths() throws Exception {
        Path p = HDFS.path("/kit/file");
        assertThat(p.toUri().getScheme()).isEqualTo("hdfs");
        FileSystem fs = p.getFileSystem();
        assertThat(fs.isDistributedFS()).isTrue();
        try (FSDataOutputStream out = fs.create(p, WriteMode.NO_OVERWRITE)) {
            out.write("on hdfs".getBytes(StandardCharsets.UTF_8));
        }
        try (FSDataInputStream in = HDFS.fileSystem().open(p)) {
            assertThat(new String(in.readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("on hdfs");
        }
        assertThat(HDFS.hadoopFileSystem().exists(new org.apache.hadoop.fs.Path("/kit/file")))
                .isTrue();
    }
}
