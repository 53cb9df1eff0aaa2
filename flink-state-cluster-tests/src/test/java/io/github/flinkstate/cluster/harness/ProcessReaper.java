package io.github.flinkstate.cluster.harness;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

/**
 * Makes sure no cluster JVM outlives the test JVM: every started {@link FlinkProcess} is killed by
 * a JVM shutdown hook (runs on normal exit, on a test timeout that terminates the fork, on
 * SIGTERM/SIGINT). A test JVM killed with SIGKILL cannot run hooks, so each process also leaves a
 * pid file in the harness's work directory and {@link #killLeftovers(Path)} kills processes of a
 * previous run at the start of the next one (only if the pid still runs our command line, so a
 * recycled pid is never touched).
 *
 * <p>Thread safety: thread-safe.
 */
final class ProcessReaper {

    private static final Set<FlinkProcess> RUNNING = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime()
                .addShutdownHook(new Thread(ProcessReaper::killAll, "cluster-process-reaper"));
    }

    private ProcessReaper() {}

    static void register(FlinkProcess p) {
        RUNNING.add(p);
    }

    static void unregister(FlinkProcess p) {
        RUNNING.remove(p);
    }

    /** Kills every process still registered ({@code kill -9}). */
    static void killAll() {
        for (FlinkProcess p : RUNNING.toArray(new FlinkProcess[0])) {
            p.kill();
        }
    }

    /** Writes the pid file of a process started in {@code workDir}. */
    static void writePidFile(Path pidDir, FlinkProcess p) throws IOException {
        Files.createDirectories(pidDir);
        Files.writeString(pidDir.resolve(p.name() + ".pid"), Long.toString(p.pid()));
    }

    /**
     * Kills the processes of pid files under {@code pidDir} whose command line still mentions
     * {@code marker} (the work directory of the run that started them), then deletes the files.
     */
    static void killLeftovers(Path pidDir, String marker) throws IOException {
        if (!Files.isDirectory(pidDir)) {
            return;
        }
        try (Stream<Path> files = Files.list(pidDir)) {
            for (Path f : files.filter(f -> f.toString().endsWith(".pid")).toList()) {
                long pid = Long.parseLong(Files.readString(f).trim());
                ProcessHandle.of(pid)
                        .filter(h -> h.info().commandLine().orElse("").contains(marker))
                        .ifPresent(ProcessHandle::destroyForcibly);
                Files.delete(f);
            }
        }
    }
}
