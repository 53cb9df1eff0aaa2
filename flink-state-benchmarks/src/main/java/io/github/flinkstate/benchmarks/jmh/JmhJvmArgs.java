package io.github.flinkstate.benchmarks.jmh;

/**
 * The JVM flags every JMH fork gets, as compile-time constants so that they can be listed in
 * {@code @Fork(jvmArgsAppend = ...)}.
 *
 * <p>The {@code --add-opens} flags are the parent pom property {@code flink.jvm.opens} (Flink on
 * Java 17 reflects into {@code java.util}, {@code java.lang} and others); {@code JmhJvmArgsTest}
 * fails when the two drift apart. The heap is fixed so that every backend runs with the same
 * memory: the HashMap backend and a 100%-hit LRU cache hold all state on the heap.
 */
public final class JmhJvmArgs {

    public static final String HEAP = "-Xmx4g";

    /**
     * For {@link EngineBenchmark}: the LSM engine's block cache is on the heap (10M keys: ~2.3 GB).
     */
    public static final String HEAP_ENGINE = "-Xmx6g";

    public static final String OPEN_UTIL = "--add-opens=java.base/java.util=ALL-UNNAMED";
    public static final String OPEN_LANG = "--add-opens=java.base/java.lang=ALL-UNNAMED";
    public static final String OPEN_REFLECT = "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED";
    public static final String OPEN_IO = "--add-opens=java.base/java.io=ALL-UNNAMED";
    public static final String OPEN_NIO = "--add-opens=java.base/java.nio=ALL-UNNAMED";
    public static final String OPEN_NIO_CH = "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED";
    public static final String OPEN_NET = "--add-opens=java.base/java.net=ALL-UNNAMED";
    public static final String OPEN_CONCURRENT =
            "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED";
    public static final String OPEN_ATOMIC =
            "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED";
    public static final String OPEN_TIME = "--add-opens=java.base/java.time=ALL-UNNAMED";
    public static final String OPEN_TEXT = "--add-opens=java.base/java.text=ALL-UNNAMED";
    public static final String OPEN_MATH = "--add-opens=java.base/java.math=ALL-UNNAMED";

    private JmhJvmArgs() {}
}
