package io.github.flinkstate.cluster.harness;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The cluster-level {@code config.yaml} shared by the JobManager and the TaskManagers: loopback
 * addresses, fixed JobManager ports, small memory, fast failure detection, and what belongs in a
 * cluster configuration for our backends (the DSTL storage and its base path on HDFS; the default
 * checkpoint directory). Per-process keys (TaskManager resource id, temp directories) are added by
 * {@link #withProcess}.
 *
 * <p>Memory: JobManager 640 MB process, TaskManager 900 MB process (2 slots, 25% managed memory for
 * RocksDB); Flink derives the JVM heap/direct/metaspace flags from these, as its scripts do.
 *
 * <p>Not thread-safe; build, then write.
 */
public final class ClusterConfig {

    private final Map<String, String> entries = new LinkedHashMap<>();

    public ClusterConfig(int rpcPort, int restPort, String hdfsUri) {
        put("jobmanager.rpc.address", "127.0.0.1");
        put("jobmanager.rpc.port", rpcPort);
        put("jobmanager.bind-host", "127.0.0.1");
        put("rest.address", "127.0.0.1");
        put("rest.bind-address", "127.0.0.1");
        put("rest.port", restPort);
        put("taskmanager.host", "127.0.0.1");
        put("taskmanager.bind-host", "127.0.0.1");
        put("taskmanager.numberOfTaskSlots", 2);
        // spread a job's slots over all TaskManagers, so that a kill hits part of the job
        put("taskmanager.load-balance.mode", "slots");

        put("jobmanager.memory.process.size", "640m");
        put("jobmanager.memory.jvm-metaspace.size", "160m");
        put("jobmanager.memory.jvm-overhead.min", "96m");
        put("taskmanager.memory.process.size", "900m");
        put("taskmanager.memory.jvm-metaspace.size", "160m");
        put("taskmanager.memory.jvm-overhead.min", "96m");
        put("taskmanager.memory.framework.heap.size", "64m");
        put("taskmanager.memory.framework.off-heap.size", "64m");
        put("taskmanager.memory.network.min", "32m");
        put("taskmanager.memory.network.max", "32m");
        put("taskmanager.memory.managed.fraction", "0.25");

        // a killed TaskManager is noticed within seconds (connection loss usually sooner)
        put("heartbeat.interval", "1000");
        put("heartbeat.timeout", "4000");
        put("restart-strategy.type", "fixed-delay");
        put("restart-strategy.fixed-delay.attempts", 10);
        put("restart-strategy.fixed-delay.delay", "1s");

        // the REST API answers from caches refreshed every 3 s by default; the harness polls it
        put("web.refresh-interval", "100ms");
        put("rest.cache.checkpoint-statistics.timeout", "50ms");
        put("rest.cache.execution-graph.timeout", "50ms");

        // our DSTL: created per job per TaskManager from the TaskManager's configuration
        put("state.changelog.storage", "dfs-batched");
        put("state.changelog.dstl.dfs-batched.base-path", hdfsUri + "/dstl");
        put("execution.checkpointing.dir", hdfsUri + "/checkpoints/default");
        put("execution.checkpointing.savepoint-dir", hdfsUri + "/savepoints/default");
    }

    private ClusterConfig(Map<String, String> entries) {
        this.entries.putAll(entries);
    }

    public ClusterConfig put(String key, Object value) {
        entries.put(key, String.valueOf(value));
        return this;
    }

    public String get(String key) {
        return entries.get(key);
    }

    public Map<String, String> asMap() {
        return Map.copyOf(entries);
    }

    /**
     * A copy with the keys of one process (its resource id and temp directory under {@code dir}).
     */
    public ClusterConfig withProcess(String resourceId, Path dir) {
        ClusterConfig c = new ClusterConfig(entries);
        if (resourceId != null) {
            c.put("taskmanager.resource-id", resourceId);
        }
        c.put("io.tmp.dirs", dir.resolve("tmp").toString());
        return c;
    }

    /** Writes {@code config.yaml} and a log4j2 configuration into {@code confDir}. */
    public void write(Path confDir) throws IOException {
        Files.createDirectories(confDir);
        String yaml =
                entries.entrySet().stream()
                        .map(e -> e.getKey() + ": " + quote(e.getValue()))
                        .collect(Collectors.joining("\n", "", "\n"));
        Files.writeString(confDir.resolve("config.yaml"), yaml);
        Files.writeString(
                confDir.resolve("log4j.properties"),
                String.join(
                        "\n",
                        "rootLogger.level = INFO",
                        "rootLogger.appenderRef.file.ref = MainAppender",
                        "appender.main.name = MainAppender",
                        "appender.main.type = File",
                        "appender.main.append = true",
                        "appender.main.fileName = ${sys:log.file}",
                        "appender.main.layout.type = PatternLayout",
                        "appender.main.layout.pattern = %d{HH:mm:ss,SSS} %-5p %-60c %x - %m%n",
                        "logger.hadoop.name = org.apache.hadoop",
                        "logger.hadoop.level = WARN",
                        "logger.pekko.name = org.apache.pekko",
                        "logger.pekko.level = WARN",
                        debugLoggers()));
    }

    /**
     * Extra DEBUG loggers from {@code -Dcluster.debugLoggers=org.apache.flink.state.changelog,...}
     * (comma-separated logger names), for tracing a scenario; none by default.
     */
    private static String debugLoggers() {
        StringBuilder b = new StringBuilder();
        int i = 0;
        for (String name : System.getProperty("cluster.debugLoggers", "").split(",")) {
            if (!name.isBlank()) {
                b.append("logger.debug").append(i).append(".name = ").append(name.trim());
                b.append('\n');
                b.append("logger.debug").append(i).append(".level = DEBUG\n");
                i++;
            }
        }
        return b.toString();
    }

    private static String quote(String v) {
        return v.matches("[A-Za-z0-9_./:\\-]+") ? v : "'" + v.replace("'", "''") + "'";
    }
}
