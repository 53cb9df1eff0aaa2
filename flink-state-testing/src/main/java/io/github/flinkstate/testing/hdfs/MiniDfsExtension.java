package io.github.flinkstate.testing.hdfs;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.Comparator;
import java.util.stream.Stream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.fs.hdfs.HadoopFileSystem;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A JUnit 5 extension that starts a real HDFS (Hadoop's {@link MiniDFSCluster}, one NameNode and
 * {@code dataNodes} DataNodes in this JVM) before the tests of a class and shuts it down after
 * them. Register it on a static field:
 *
 * <pre>{@code
 * @RegisterExtension static final MiniDfsExtension HDFS = new MiniDfsExtension();
 * ... new Path(HDFS.uri() + "/dir")      // resolved by Flink's hdfs:// file system
 * ... HDFS.fileSystem()                  // Flink's HadoopFileSystem over the cluster
 * }</pre>
 *
 * <p>The cluster's storage lives in a temporary directory deleted after the class. Flink resolves
 * {@code hdfs://} URIs of this cluster through flink-hadoop-fs (on the test classpath with this
 * module).
 *
 * <p>Thread safety: started and stopped by JUnit on one thread; the accessors may be called from
 * any thread while the cluster runs.
 */
public final class MiniDfsExtension implements BeforeAllCallback, AfterAllCallback {

    private final int dataNodes;
    private volatile MiniDFSCluster cluster;
    private volatile File baseDir;

    /** One DataNode. */
    public MiniDfsExtension() {
        this(1);
    }

    public MiniDfsExtension(int dataNodes) {
        this.dataNodes = dataNodes;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        start();
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        stop();
    }

    /** Starts the cluster (done by JUnit; public for use outside JUnit). */
    public void start() throws IOException {
        if (cluster != null) {
            return;
        }
        baseDir = Files.createTempDirectory("minidfs").toFile();
        Configuration conf = new Configuration();
        conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, baseDir.getAbsolutePath());
        MiniDFSCluster c = new MiniDFSCluster.Builder(conf).numDataNodes(dataNodes).build();
        c.waitActive();
        cluster = c;
    }

    /** Shuts the cluster down and deletes its storage (done by JUnit). */
    public void stop() throws IOException {
        MiniDFSCluster c = cluster;
        cluster = null;
        if (c != null) {
            c.shutdown();
        }
        if (baseDir != null) {
            try (Stream<java.nio.file.Path> files = Files.walk(baseDir.toPath())) {
                files.sorted(Comparator.reverseOrder())
                        .map(java.nio.file.Path::toFile)
                        .forEach(File::delete);
            }
            baseDir = null;
        }
    }

    /** The running cluster. */
    public MiniDFSCluster cluster() {
        MiniDFSCluster c = cluster;
        if (c == null) {
            throw new IllegalStateException("the MiniDFSCluster is not running");
        }
        return c;
    }

    /** The cluster's URI, {@code hdfs://localhost:port}, without a trailing slash. */
    public String uri() {
        try {
            String u = cluster().getFileSystem().getUri().toString();
            return u.endsWith("/") ? u.substring(0, u.length() - 1) : u;
        } catch (IOException e) {
            throw new IllegalStateException("cannot reach the MiniDFSCluster", e);
        }
    }

    /** {@code hdfs://localhost:port/<relative>}. */
    public Path path(String relative) {
        return new Path(
                uri() + "/" + (relative.startsWith("/") ? relative.substring(1) : relative));
    }

    /** Flink's {@link HadoopFileSystem} over the cluster. */
    public FileSystem fileSystem() throws IOException {
        return new HadoopFileSystem(cluster().getFileSystem());
    }

    /** Hadoop's own file system client of the cluster. */
    public org.apache.hadoop.fs.FileSystem hadoopFileSystem() throws IOException {
        return cluster().getFileSystem();
    }
}
