package io.github.flinkstate.benchmarks.scenario;

import io.github.flinkstate.benchmarks.common.BackendSpec;
import io.github.flinkstate.changelog.DfsChangelogOptions;
import java.io.File;
import java.io.FileWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.runtime.checkpoint.AbstractCheckpointStats;
import org.apache.flink.runtime.checkpoint.CheckpointStatsSnapshot;
import org.apache.flink.runtime.checkpoint.CompletedCheckpointStats;
import org.apache.flink.runtime.execution.ExecutionState;
import org.apache.flink.runtime.executiongraph.AccessExecution;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.util.Collector;

/**
 * The two workloads of the "log-based incremental checkpoint" article, run three times in one
 * process: (a) incremental RocksDB without changelog, (b) Flink's changelog backend over RocksDB
 * with Flink's own {@code filesystem} DSTL, (c) the same with our {@code dfs-batched} DSTL. DSTL
 * base paths and checkpoint storage are on {@link SlowFileSystem} ({@code slowfs://}), which delays
 * every output-stream close by a random latency (median ~5 ms, 1% of writes 1 s).
 *
 * <p>Per configuration: a job on a MiniCluster (checkpoint every second, retained on cancellation)
 * processes {@code --records} records from a sequence source, then is throttled, cancelled after
 * two more completed checkpoints, and a second job restores from its last checkpoint (CLAIM).
 * Measured: checkpoint end-to-end duration p50/p99, the sum of checkpointed (incremental) bytes,
 * the full size of the last checkpoint, files created and bytes written under the DSTL base path,
 * the throughput of the load phase, and the restore time (longest time a subtask of the restored
 * job spent in INITIALIZING, which is where keyed state, changelog included, is restored). Printed
 * as ratios to the {@code filesystem} DSTL, written as JSON.
 *
 * <p>Workloads: {@code value} = ValueState, one new key per record (key = record id); {@code
 * window} = 10 s sliding event-time windows every 1 s, 1000 keys, count aggregate, event time = id
 * / 10 ms.
 *
 * <p>Usage: {@code mvn -pl flink-state-benchmarks exec:exec@changelog -Dscenario.args="--workload
 * value --records 20000000 --latency-median-ms 5 --tail-ms 1000 --tail-fraction 0.01 --json
 * target/changelog-value.json"} (default records: 20M for value, 2M for window; also {@code
 * --parallelism}, {@code --materialize-interval}).
 */
public final class ChangelogScenario {

    /** Records emitted by the source so far (this JVM's MiniCluster), reset per job. */
    static final AtomicLong EMITTED = new AtomicLong();

    private ChangelogScenario() {}

    /** One configuration's figures. */
    record Result(
            String config,
            double cpP50Ms,
            double cpP99Ms,
            long completedCheckpoints,
            long failedCheckpoints,
            long checkpointedBytes,
            long fullSizeBytes,
            long dstlFiles,
            long dstlBytes,
            long allFilesCreated,
            long tailDelays,
            double recordsPerSecond,
            long restoreMs,
            long submitToRunningMs) {}

    public static void main(String[] args) throws Exception {
        Map<String, String> flags = parseFlags(args);
        String workload = flags.getOrDefault("workload", "value");
        // Defaults sized for ~1 minute of load per configuration on 2 cores.
        long records =
                Long.parseLong(
                        flags.getOrDefault(
                                "records", workload.equals("window") ? "2000000" : "20000000"));
        if (!workload.equals("value") && !workload.equals("window")) {
            throw new IllegalArgumentException("--workload must be value or window");
        }
        long medianMs = Long.parseLong(flags.getOrDefault("latency-median-ms", "5"));
        long tailMs = Long.parseLong(flags.getOrDefault("tail-ms", "1000"));
        double tailFraction = Double.parseDouble(flags.getOrDefault("tail-fraction", "0.01"));
        int parallelism = Integer.parseInt(flags.getOrDefault("parallelism", "2"));
        String materialize = flags.getOrDefault("materialize-interval", "10 s");
        File json = new File(flags.getOrDefault("json", "target/changelog-" + workload + ".json"));

        SlowFileSystem.install(medianMs, tailMs, tailFraction);
        File root = Files.createTempDirectory("changelog-scenario").toFile();

        List<Result> results = new ArrayList<>();
        for (String name : List.of("rocksdb", "filesystem", "dfs-batched")) {
            File dstl = new File(root, name + "-dstl");
            dstl.mkdirs();
            Configuration config = new Configuration();
            if (name.equals("rocksdb")) {
                BackendSpec.rocksDb().applyTo(config);
            } else if (name.equals("filesystem")) {
                BackendSpec.rocksDb().applyTo(config);
                config.setString("state.changelog.enabled", "true");
                config.setString("state.changelog.storage", "filesystem");
                config.setString("state.changelog.dstl.dfs.base-path", SlowFileSystem.uri(dstl));
            } else {
                BackendSpec.changelogOver(BackendSpec.rocksDb()).applyTo(config);
                config.set(DfsChangelogOptions.BASE_PATH, SlowFileSystem.uri(dstl));
            }
            config.setString("state.changelog.periodic-materialize.interval", materialize);
            config.setString("execution.checkpointing.interval", "1 s");
            config.setString(
                    "execution.checkpointing.dir",
                    SlowFileSystem.uri(new File(root, name + "-checkpoints")));
            config.setString(
                    "execution.checkpointing.externalized-checkpoint-retention",
                    "RETAIN_ON_CANCELLATION");
            config.setString("execution.checkpointing.tolerable-failed-checkpoints", "1000");
            config.setString("restart-strategy.type", "none");
            config.setString("web.checkpoints.history", "100000");
            config.setString("pipeline.object-reuse", "true");
            Result r = runConfig(name, workload, records, parallelism, config, dstl);
            results.add(r);
            System.out.printf(Locale.ROOT, "%-12s done: %s%n", name, r);
        }
        printTable(workload, results);
        writeJson(
                json,
                workload,
                records,
                parallelism,
                medianMs,
                tailMs,
                tailFraction,
                materialize,
                results);
        System.out.println("JSON written to " + json.getAbsolutePath());
        // Exit explicitly: Flink's own 'filesystem' DSTL (FsStateChangelogStorage, via
        // TaskChangelogRegistry.defaultChangelogRegistry) discards files on an
        // Executors.newFixedThreadPool with the JDK's non-daemon 'pool-N-thread-1' threads and never
        // shuts it down, so once it deleted a file this JVM would stay alive after the work is done.
        System.exit(0);
    }

    private static Result runConfig(
            String name,
            String workload,
            long records,
            int parallelism,
            Configuration config,
            File dstl)
            throws Exception {
        MiniClusterConfiguration mcc =
                new MiniClusterConfiguration.Builder()
                        .setConfiguration(config)
                        .setNumTaskManagers(1)
                        .setNumSlotsPerTaskManager(parallelism)
                        .build();
        try (MiniCluster cluster = new MiniCluster(mcc)) {
            cluster.start();

            // Phase 1: load, then cancel with a retained checkpoint.
            EMITTED.set(0);
            SlowFileSystem.resetCounters(dstl);
            JobGraph load = buildJob(config, workload, records, parallelism);
            long start = System.nanoTime();
            JobID loadId = cluster.submitJob(load).get().getJobID();
            long loadNanos = -1;
            long checkpointsAtLoadEnd = -1;
            long deadline = System.nanoTime() + Duration.ofMinutes(10).toNanos();
            while (true) {
                JobStatus status = cluster.getJobStatus(loadId).get();
                if (status.isGloballyTerminalState()) {
                    throw new IllegalStateException(
                            name + ": load job ended early with status " + status);
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(name + ": load job did not finish in time");
                }
                if (loadNanos < 0 && EMITTED.get() >= records) {
                    loadNanos = System.nanoTime() - start;
                    checkpointsAtLoadEnd = completed(cluster.getExecutionGraph(loadId).get());
                }
                if (loadNanos >= 0
                        && completed(cluster.getExecutionGraph(loadId).get())
                                >= checkpointsAtLoadEnd + 2) {
                    break;
                }
                Thread.sleep(50);
            }
            long dstlFiles = SlowFileSystem.countedCreates();
            long dstlBytes = SlowFileSystem.countedBytes();
            long allCreates = SlowFileSystem.creates();
            long tails = SlowFileSystem.tailDelays();
            cluster.cancelJob(loadId).get();
            cluster.requestJobResult(loadId).get();
            AccessExecutionGraph loadGraph = cluster.getExecutionGraph(loadId).get();
            CheckpointStatsSnapshot stats = loadGraph.getCheckpointStatsSnapshot();
            CompletedCheckpointStats latest = stats.getHistory().getLatestCompletedCheckpoint();
            long checkpointed = 0;
            for (AbstractCheckpointStats cp : stats.getHistory().getCheckpoints()) {
                if (cp instanceof CompletedCheckpointStats) {
                    checkpointed += cp.getCheckpointedSize();
                }
            }

            // Phase 2: restore from the retained checkpoint; wait until every subtask runs.
            Configuration restoreConfig = new Configuration(config);
            restoreConfig.setString("execution.state-recovery.path", latest.getExternalPath());
            restoreConfig.setString("execution.state-recovery.claim-mode", "CLAIM");
            JobGraph restore = buildJob(restoreConfig, workload, records, parallelism);
            restore.setSavepointRestoreSettings(
                    SavepointRestoreSettings.forPath(
                            latest.getExternalPath(), false, RecoveryClaimMode.CLAIM));
            long submitted = System.nanoTime();
            JobID restoreId = cluster.submitJob(restore).get().getJobID();
            long submitToRunning;
            while (true) {
                JobStatus status = cluster.getJobStatus(restoreId).get();
                if (status.isGloballyTerminalState()) {
                    throw new IllegalStateException(
                            name + ": restored job ended with status " + status);
                }
                if (allRunning(cluster.getExecutionGraph(restoreId).get())) {
                    submitToRunning = (System.nanoTime() - submitted) / 1_000_000;
                    break;
                }
                if (System.nanoTime() - submitted > Duration.ofMinutes(3).toNanos()) {
                    throw new IllegalStateException(
                            name + ": restored job not running after 3 minutes");
                }
                Thread.sleep(5);
            }
            long restoreMs = maxInitializingMillis(cluster.getExecutionGraph(restoreId).get());
            cluster.cancelJob(restoreId).get();
            cluster.requestJobResult(restoreId).get();

            return new Result(
                    name,
                    stats.getSummaryStats().getEndToEndDurationStats().getQuantile(0.5),
                    stats.getSummaryStats().getEndToEndDurationStats().getQuantile(0.99),
                    stats.getCounts().getNumberOfCompletedCheckpoints(),
                    stats.getCounts().getNumberOfFailedCheckpoints(),
                    checkpointed,
                    latest.getStateSize(),
                    dstlFiles,
                    dstlBytes,
                    allCreates,
                    tails,
                    records / (loadNanos / 1e9),
                    restoreMs,
                    submitToRunning);
        }
    }

    private static long completed(AccessExecutionGraph graph) {
        CheckpointStatsSnapshot s = graph.getCheckpointStatsSnapshot();
        return s == null ? 0 : s.getCounts().getNumberOfCompletedCheckpoints();
    }

    private static boolean allRunning(AccessExecutionGraph graph) {
        int n = 0;
        for (AccessExecutionVertex v : graph.getAllExecutionVertices()) {
            n++;
            if (v.getCurrentExecutionAttempt().getState() != ExecutionState.RUNNING) {
                return false;
            }
        }
        return n > 0;
    }

    /** Longest INITIALIZING -> RUNNING interval over the subtasks (state restore). */
    private static long maxInitializingMillis(AccessExecutionGraph graph) {
        long max = 0;
        for (AccessExecutionVertex v : graph.getAllExecutionVertices()) {
            AccessExecution e = v.getCurrentExecutionAttempt();
            long init = e.getStateTimestamp(ExecutionState.INITIALIZING);
            long running = e.getStateTimestamp(ExecutionState.RUNNING);
            if (init > 0 && running >= init) {
                max = Math.max(max, running - init);
            }
        }
        return max;
    }

    private static JobGraph buildJob(
            Configuration config, String workload, long records, int parallelism) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
        env.setParallelism(parallelism);
        // One split, so ids are dense and a restored source continues after the load phase.
        DataStream<Long> ids =
                env.fromSequence(0, Long.MAX_VALUE)
                        .setParallelism(1)
                        .map(new Throttle(records))
                        .setParallelism(1);
        if (workload.equals("value")) {
            ids.keyBy(id -> id, Types.LONG)
                    .process(new NewKeyPerRecord())
                    .sinkTo(new DiscardingSink<>());
        } else {
            ids.assignTimestampsAndWatermarks(
                            WatermarkStrategy.<Long>forMonotonousTimestamps()
                                    .withTimestampAssigner((id, ts) -> id / 10))
                    .setParallelism(1)
                    .keyBy(id -> id % 1000, Types.LONG)
                    .window(
                            SlidingEventTimeWindows.of(
                                    Duration.ofSeconds(10), Duration.ofSeconds(1)))
                    .aggregate(new Count())
                    .sinkTo(new DiscardingSink<>());
        }
        return env.getStreamGraph().getJobGraph();
    }

    /** Counts emitted ids; after the load phase sleeps 1 ms per record (~1000 records/s). */
    private static final class Throttle implements MapFunction<Long, Long> {
        private final long records;

        Throttle(long records) {
            this.records = records;
        }

        @Override
        public Long map(Long id) throws Exception {
            EMITTED.incrementAndGet();
            if (id >= records) {
                Thread.sleep(1);
            }
            return id;
        }
    }

    /** Writes one ValueState entry per record; every record is a new key. */
    private static final class NewKeyPerRecord extends KeyedProcessFunction<Long, Long, Long> {
        private transient ValueState<Long> value;

        @Override
        public void open(org.apache.flink.api.common.functions.OpenContext ctx) {
            value = getRuntimeContext().getState(new ValueStateDescriptor<>("value", Types.LONG));
        }

        @Override
        public void processElement(Long id, Context ctx, Collector<Long> out) throws Exception {
            value.update(id);
        }
    }

    /** Count aggregate of a window. */
    private static final class Count implements AggregateFunction<Long, Long, Long> {
        @Override
        public Long createAccumulator() {
            return 0L;
        }

        @Override
        public Long add(Long value, Long acc) {
            return acc + 1;
        }

        @Override
        public Long getResult(Long acc) {
            return acc;
        }

        @Override
        public Long merge(Long a, Long b) {
            return a + b;
        }
    }

    private static void printTable(String workload, List<Result> results) {
        Result base =
                results.stream()
                        .filter(r -> r.config().equals("filesystem"))
                        .findFirst()
                        .orElseThrow();
        System.out.printf(
                Locale.ROOT,
                "%nworkload %s, ratios to the filesystem DSTL (raw value in brackets)%n",
                workload);
        String[] heads = {
            "config",
            "cp p50",
            "cp p99",
            "checkpointed",
            "full size",
            "DSTL files",
            "DSTL bytes",
            "restore",
            "records/s"
        };
        System.out.printf(
                Locale.ROOT, "%-12s %18s %18s %20s %20s %16s %20s %16s %20s%n", (Object[]) heads);
        for (Result r : results) {
            System.out.printf(
                    Locale.ROOT,
                    "%-12s %18s %18s %20s %20s %16s %20s %16s %20s%n",
                    r.config(),
                    cell(r, base, Result::cpP50Ms, "%.0f ms"),
                    cell(r, base, Result::cpP99Ms, "%.0f ms"),
                    cell(r, base, x -> x.checkpointedBytes() / 1048576.0, "%.1f MiB"),
                    cell(r, base, x -> x.fullSizeBytes() / 1048576.0, "%.1f MiB"),
                    cell(r, base, x -> (double) x.dstlFiles(), "%.0f"),
                    cell(r, base, x -> x.dstlBytes() / 1048576.0, "%.1f MiB"),
                    cell(r, base, x -> (double) x.restoreMs(), "%.0f ms"),
                    cell(r, base, Result::recordsPerSecond, "%.0f"));
        }
    }

    private static String cell(
            Result r, Result base, Function<Result, Double> f, String rawFormat) {
        double v = f.apply(r);
        double b = f.apply(base);
        String ratio = b == 0 ? "-" : String.format(Locale.ROOT, "%.2fx", v / b);
        return ratio + " (" + String.format(Locale.ROOT, rawFormat, v) + ")";
    }

    private static void writeJson(
            File file,
            String workload,
            long records,
            int parallelism,
            long medianMs,
            long tailMs,
            double tailFraction,
            String materialize,
            List<Result> results)
            throws IOException {
        file.getAbsoluteFile().getParentFile().mkdirs();
        StringBuilder sb = new StringBuilder();
        sb.append("{\n  \"scenario\": \"changelog\",\n  \"workload\": \"")
                .append(workload)
                .append("\",\n");
        sb.append("  \"machine\": {\"cores\": ")
                .append(Runtime.getRuntime().availableProcessors())
                .append(", \"java\": \"")
                .append(System.getProperty("java.version"))
                .append("\", \"os\": \"")
                .append(System.getProperty("os.name"))
                .append("\"},\n");
        sb.append(
                String.format(
                        Locale.ROOT,
                        "  \"records\": %d,\n  \"parallelism\": %d,\n  \"latencyMedianMs\": %d,\n  \"tailMs\": %d,\n  \"tailFraction\": %s,\n  \"materializeInterval\": \"%s\",\n  \"runs\": [\n",
                        records,
                        parallelism,
                        medianMs,
                        tailMs,
                        tailFraction,
                        materialize));
        for (int i = 0; i < results.size(); i++) {
            Result r = results.get(i);
            sb.append(
                    String.format(
                            Locale.ROOT,
                            "    {\"config\": \"%s\", \"checkpointP50Ms\": %.1f, \"checkpointP99Ms\": %.1f, \"completedCheckpoints\": %d, \"failedCheckpoints\": %d, \"checkpointedBytes\": %d, \"fullCheckpointBytes\": %d, \"dstlFilesCreated\": %d, \"dstlBytesWritten\": %d, \"allFilesCreated\": %d, \"injectedTailDelays\": %d, \"loadRecordsPerSecond\": %.1f, \"restoreMs\": %d, \"restoreSubmitToRunningMs\": %d}%s%n",
                            r.config(),
                            r.cpP50Ms(),
                            r.cpP99Ms(),
                            r.completedCheckpoints(),
                            r.failedCheckpoints(),
                            r.checkpointedBytes(),
                            r.fullSizeBytes(),
                            r.dstlFiles(),
                            r.dstlBytes(),
                            r.allFilesCreated(),
                            r.tailDelays(),
                            r.recordsPerSecond(),
                            r.restoreMs(),
                            r.submitToRunningMs(),
                            i + 1 < results.size() ? "," : ""));
        }
        sb.append("  ]\n}\n");
        try (FileWriter w = new FileWriter(file)) {
            w.write(sb.toString());
        }
    }

    private static Map<String, String> parseFlags(String[] args) {
        Map<String, String> flags = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            flags.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        }
        return flags;
    }
}
