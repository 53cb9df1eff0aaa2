package io.github.flinkstate.cluster.harness;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/**
 * The Flink installation the build assembled under {@code target/flink}: {@code lib/} (Flink's
 * jars, log4j and our plugin jars, copied by maven-dependency-plugin at package) and {@code
 * hadoop/} (the Hadoop client, put on the classpath after {@code lib/} as Flink's scripts do with
 * {@code HADOOP_CLASSPATH}). Also knows the job jar this module builds and the JVM flags the parent
 * POM defines. All paths come from system properties set by failsafe.
 *
 * <p>Immutable and thread-safe.
 */
public final class FlinkDistribution {

    private final Path home;
    private final Path jobJar;
    private final List<String> jvmOpens;

    private FlinkDistribution(Path home, Path jobJar, List<String> jvmOpens) {
        this.home = home;
        this.jobJar = jobJar;
        this.jvmOpens = jvmOpens;
    }

    /**
     * From the system properties {@code cluster.dist}, {@code cluster.jobJar}, {@code
     * cluster.jvmOpens}.
     */
    public static FlinkDistribution fromSystemProperties() {
        Path home = Path.of(required("cluster.dist"));
        Path jobJar = Path.of(required("cluster.jobJar"));
        if (!Files.isDirectory(home.resolve("lib")) || !Files.isDirectory(home.resolve("hadoop"))) {
            throw new IllegalStateException(
                    home
                            + " has no lib/ or hadoop/ directory: run the tests with 'mvn verify'"
                            + " (the package phase assembles them)");
        }
        if (!Files.isRegularFile(jobJar)) {
            throw new IllegalStateException("job jar " + jobJar + " missing: run 'mvn verify'");
        }
        List<String> opens =
                Stream.of(required("cluster.jvmOpens").trim().split("\\s+"))
                        .filter(s -> !s.isEmpty())
                        .toList();
        return new FlinkDistribution(home, jobJar, opens);
    }

    private static String required(String key) {
        String v = System.getProperty(key);
        if (v == null || v.isBlank()) {
            throw new IllegalStateException(
                    "system property " + key + " not set: run the tests with 'mvn verify'");
        }
        return v;
    }

    public Path lib() {
        return home.resolve("lib");
    }

    public Path jobJar() {
        return jobJar;
    }

    public List<String> jvmOpens() {
        return jvmOpens;
    }

    /** {@code lib/*:hadoop/*}: Flink's classpath followed by the Hadoop classpath. */
    public String classpath() {
        return lib()
                + File.separator
                + "*"
                + File.pathSeparator
                + home.resolve("hadoop")
                + File.separator
                + "*";
    }

    /** Whether a jar in {@code lib/} contains {@code className} (e.g. a backend factory). */
    public boolean libHasClass(String className) {
        String entry = className.replace('.', '/') + ".class";
        try (Stream<Path> jars = Files.list(lib())) {
            for (Path jar : jars.filter(p -> p.toString().endsWith(".jar")).toList()) {
                try (JarFile f = new JarFile(jar.toFile())) {
                    if (f.getEntry(entry) != null) {
                        return true;
                    }
                }
            }
            return false;
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + lib(), e);
        }
    }

    /** The jar file names in {@code lib/} that are ours ({@code flink-state-*}). */
    public List<String> pluginJars() throws IOException {
        try (Stream<Path> jars = Files.list(lib())) {
            return jars.map(p -> p.getFileName().toString())
                    .filter(n -> n.startsWith("flink-state-"))
                    .sorted()
                    .toList();
        }
    }
}
