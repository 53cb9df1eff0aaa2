package io.github.flinkstate.cluster.harness;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One JobManager or TaskManager JVM started by the harness: its command line, its log files and its
 * fate. {@link #kill()} is {@code kill -9} (SIGKILL: no shutdown hook, no cleanup, half-written
 * files stay where they are).
 *
 * <p>Every process is registered in {@link ProcessReaper} when started and unregistered when it is
 * found dead, so a test JVM that ends for any reason (failure, timeout, Ctrl-C) kills it.
 *
 * <p>Thread safety: thread-safe (the JDK's {@link Process} is).
 */
public final class FlinkProcess {

    private final String name;
    private final Process process;
    private final Path log;

    private FlinkProcess(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
    }

    /**
     * Starts {@code mainClass} in a new JVM.
     *
     * @param name short name for logs and reports ({@code jobmanager}, {@code taskmanager-3})
     * @param workDir the process's own directory: its stdout/stderr go to {@code <name>.out} there
     */
    static FlinkProcess start(
            String name,
            Path workDir,
            String classpath,
            List<String> jvmArgs,
            String mainClass,
            List<String> args)
            throws IOException {
        Files.createDirectories(workDir);
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmArgs);
        command.add("-cp");
        command.add(classpath);
        command.add(mainClass);
        command.addAll(args);
        Path out = workDir.resolve(name + ".out");
        Files.writeString(workDir.resolve(name + ".cmd"), String.join(" ", command) + "\n");
        ProcessBuilder builder =
                new ProcessBuilder(command)
                        .directory(workDir.toFile())
                        .redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.appendTo(out.toFile()))
                        .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        builder.environment().remove("HADOOP_CONF_DIR");
        builder.environment().remove("FLINK_CONF_DIR");
        FlinkProcess p = new FlinkProcess(name, builder.start(), out);
        ProcessReaper.register(p);
        return p;
    }

    public String name() {
        return name;
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** The process's stdout and stderr. */
    public Path output() {
        return log;
    }

    /** {@code kill -9}, then waits (at most 30 s) until the OS reports it dead. */
    public void kill() {
        process.destroyForcibly();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException(name + " (pid " + pid() + ") survived SIGKILL");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            ProcessReaper.unregister(this);
        }
    }

    @Override
    public String toString() {
        return name + " (pid " + pid() + ")";
    }
}
