package io.github.flinkstate.cluster.harness;

import io.github.flinkstate.testing.wait.Waits;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.clusterframework.TaskExecutorProcessSpec;
import org.apache.flink.runtime.clusterframework.TaskExecutorProcessUtils;
import org.apache.flink.runtime.jobmanager.JobManagerProcessSpec;
import org.apache.flink.runtime.jobmanager.JobManagerProcessUtils;
import org.apache.flink.runtime.util.config.memory.ProcessMemoryUtils;

/**
 * A standalone Flink session cluster of separate JVMs on loopback: one JobManager ({@code
 * StandaloneSessionClusterEntrypoint}) and TaskManagers ({@code TaskManagerRunner}), each with its
 * own configuration directory ({@code config.yaml}, log4j) and log under {@code workDir}, started
 * from {@link FlinkDistribution}'s classpath. JVM memory flags are derived from the configuration
 * with Flink's own process-memory utilities (what {@code bin/taskmanager.sh} does through {@code
 * BashJavaUtils}).
 *
 * <p>Lifecycle: {@link #start} starts the JobManager and the initial TaskManagers and waits (with a
 * deadline) until all are registered; {@link #close} kills every process. Processes are also killed
 * by {@link ProcessReaper} when the test JVM exits.
 *
 * <p>Thread safety: not thread-safe; driven by one test thread.
 */
public final class FlinkCluster implements AutoCloseable {

    private static final String JM_MAIN =
            "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint";
    private static final String TM_MAIN = "org.apache.flink.runtime.taskexecutor.TaskManagerRunner";
    private static final Duration START_TIMEOUT = Duration.ofSeconds(90);

    private final FlinkDistribution dist;
    private final Path workDir;
    private final Path tmpRoot;
    private final ClusterConfig config;
    private final RestApi rest;
    private FlinkProcess jobManager;
    private final Map<String, FlinkProcess> taskManagers = new LinkedHashMap<>();
    private int nextTaskManager = 1;

    private FlinkCluster(FlinkDistribution dist, Path workDir, ClusterConfig config)
            throws IOException {
        this.dist = dist;
        this.workDir = workDir;
        this.tmpRoot = java.nio.file.Files.createTempDirectory("fc");
        this.config = config;
        this.rest = new RestApi("127.0.0.1", Integer.parseInt(config.get("rest.port")));
    }

    /**
     * Starts a cluster with {@code taskManagers} TaskManagers, using HDFS at {@code hdfsUri}
     * ({@code hdfs://127.0.0.1:port}).
     */
    public static FlinkCluster start(
            FlinkDistribution dist, Path workDir, String hdfsUri, int taskManagers)
            throws Exception {
        ProcessReaper.killLeftovers(workDir.resolve("pids"), workDir.toString());
        ClusterConfig config = new ClusterConfig(freePort(), freePort(), hdfsUri);
        FlinkCluster cluster = new FlinkCluster(dist, workDir, config);
        try {
            cluster.startJobManager();
            for (int i = 0; i < taskManagers; i++) {
                cluster.startTaskManager();
            }
            cluster.awaitTaskManagers(taskManagers);
            return cluster;
        } catch (Exception | Error e) {
            cluster.close();
            throw e;
        }
    }

    public RestApi rest() {
        return rest;
    }

    public ClusterConfig config() {
        return config;
    }

    public Path workDir() {
        return workDir;
    }

    /** Running TaskManagers by resource id ({@code taskmanager-N}). */
    public Map<String, FlinkProcess> taskManagers() {
        return Map.copyOf(taskManagers);
    }

    private void startJobManager() throws IOException {
        Path dir = workDir.resolve("jobmanager");
        ClusterConfig own =
                config.withProcess(
                        null, java.nio.file.Files.createDirectories(tmpRoot.resolve("jm")));
        own.write(dir.resolve("conf"));
        JobManagerProcessSpec spec =
                JobManagerProcessUtils.processSpecFromConfig(Configuration.fromMap(own.asMap()));
        List<String> jvm =
                jvmArgs(
                        JobManagerProcessUtils.generateJvmParametersStr(
                                spec, Configuration.fromMap(own.asMap())),
                        dir,
                        "jobmanager");
        jobManager =
                FlinkProcess.start(
                        "jobmanager",
                        dir,
                        dist.classpath(),
                        jvm,
                        JM_MAIN,
                        List.of("--configDir", dir.resolve("conf").toString()));
        ProcessReaper.writePidFile(workDir.resolve("pids"), jobManager);
    }

    /** Starts one more TaskManager and returns its resource id; does not wait for registration. */
    public String startTaskManager() throws IOException {
        String id = "taskmanager-" + nextTaskManager++;
        Path dir = workDir.resolve(id);
        ClusterConfig own =
                config.withProcess(
                        id,
                        java.nio.file.Files.createDirectories(
                                tmpRoot.resolve("tm" + (nextTaskManager - 1))));
        own.write(dir.resolve("conf"));
        TaskExecutorProcessSpec spec =
                TaskExecutorProcessUtils.processSpecFromConfig(Configuration.fromMap(own.asMap()));
        List<String> args = new ArrayList<>(List.of("--configDir", dir.resolve("conf").toString()));
        // the dynamic properties bin/taskmanager.sh passes, so the TaskManager uses what the JVM
        // has
        args.addAll(
                Stream.of(
                                TaskExecutorProcessUtils.generateDynamicConfigsStr(spec)
                                        .trim()
                                        .split(" "))
                        .filter(s -> !s.isEmpty())
                        .toList());
        FlinkProcess tm =
                FlinkProcess.start(
                        id,
                        dir,
                        dist.classpath(),
                        jvmArgs(ProcessMemoryUtils.generateJvmParametersStr(spec), dir, id),
                        TM_MAIN,
                        args);
        ProcessReaper.writePidFile(workDir.resolve("pids"), tm);
        taskManagers.put(id, tm);
        return id;
    }

    private List<String> jvmArgs(String memoryFlags, Path dir, String name) {
        List<String> jvm = new ArrayList<>();
        jvm.addAll(Stream.of(memoryFlags.trim().split(" ")).filter(s -> !s.isEmpty()).toList());
        jvm.addAll(dist.jvmOpens());
        jvm.add("-XX:+UseSerialGC");
        jvm.add("-Dlog.file=" + dir.resolve(name + ".log"));
        jvm.add(
                "-Dlog4j.configurationFile=file:"
                        + dir.resolve("conf").resolve("log4j.properties"));
        return jvm;
    }

    /** Starts TaskManagers until {@code count} run, and waits until they are registered. */
    public void topUp(int count) throws Exception {
        taskManagers.values().removeIf(tm -> !tm.isAlive());
        while (taskManagers.size() < count) {
            startTaskManager();
        }
        awaitTaskManagers(count);
    }

    /** {@code kill -9} of a TaskManager; it is forgotten by the harness (its slots are lost). */
    public void killTaskManager(String id) {
        FlinkProcess tm = taskManagers.remove(id);
        if (tm == null) {
            throw new IllegalArgumentException("no running TaskManager " + id);
        }
        tm.kill();
    }

    /** Waits until exactly the harness's running TaskManagers are registered at the JobManager. */
    public void awaitTaskManagers(int count) throws Exception {
        Waits.untilChecked(
                count + " TaskManagers registered",
                START_TIMEOUT,
                () -> {
                    checkAlive();
                    return rest.registeredTaskManagers().containsAll(taskManagers.keySet())
                            && taskManagers.size() == count;
                });
    }

    /** Fails (with the log to read) if a process the harness did not kill has died. */
    public void checkAlive() {
        if (jobManager != null && !jobManager.isAlive()) {
            throw new IllegalStateException(
                    "the JobManager died; see " + jobManager.output() + " and its log");
        }
        for (FlinkProcess tm : taskManagers.values()) {
            if (!tm.isAlive()) {
                throw new IllegalStateException(tm + " died; see " + tm.output() + " and its log");
            }
        }
    }

    /** A TaskManager that runs at least one task (has a busy slot), if any. */
    public Optional<String> busyTaskManager() throws IOException {
        return rest.busyTaskManagers().stream().filter(taskManagers::containsKey).findFirst();
    }

    @Override
    public void close() {
        for (FlinkProcess tm : taskManagers.values()) {
            tm.kill();
        }
        taskManagers.clear();
        if (jobManager != null) {
            jobManager.kill();
        }
        try (Stream<Path> files = java.nio.file.Files.walk(tmpRoot)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // best effort: the temp directories of killed processes
        }
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
