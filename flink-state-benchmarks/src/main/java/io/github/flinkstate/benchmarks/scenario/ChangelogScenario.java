package io.github.flinkstate.benchmarks.scenario;

import io.github.flinkstate.benchmarks.common.Args;
import io.github.flinkstate.benchmarks.scenario.changelog.ChangelogConfigs;
import io.github.flinkstate.benchmarks.scenario.changelog.ChangelogJobs;
import io.github.flinkstate.benchmarks.scenario.changelog.ChangelogResult;
import io.github.flinkstate.benchmarks.scenario.changelog.ChangelogResultsJson;
import io.github.flinkstate.benchmarks.scenario.changelog.ChangelogRun;
import io.github.flinkstate.benchmarks.scenario.changelog.ChangelogTable;
import io.github.flinkstate.benchmarks.scenario.changelog.DfsLatency;
import java.io.File;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.flink.configuration.Configuration;

/**
 * The two workloads of the "log-based incremental checkpoint" article, run three times in one
 * process: (a) incremental RocksDB without changelog, (b) Flink's changelog backend over RocksDB
 * with Flink's own {@code filesystem} DSTL, (c) the same with our {@code dfs-batched} DSTL ({@link
 * ChangelogConfigs}). DSTL base paths and checkpoint storage are on a simulated DFS, the test kit's
 * {@code InjectingFileSystem} ({@code inject://}), which delays every upload (output stream close)
 * by a random latency, median ~5 ms and 1% of uploads at 1 s ({@link DfsLatency}).
 *
 * <p>Per configuration ({@link ChangelogRun}): a job on a MiniCluster (checkpoint every second,
 * retained on cancellation) processes {@code --records} records from a sequence source, then is
 * throttled, cancelled after two more completed checkpoints, and a second job restores from its
 * last checkpoint (CLAIM). Measured: checkpoint end-to-end duration p50/p99, the sum of
 * checkpointed (incremental) bytes, the full size of the last checkpoint, files created and bytes
 * written under the DSTL base path, the throughput of the load phase, and the restore time (the
 * longest time a subtask of the restored job spent in INITIALIZING, measured as the rescale
 * scenario measures it: {@code RestoreTimes}). Printed as ratios to the {@code filesystem} DSTL
 * ({@link ChangelogTable}), written as JSON ({@link ChangelogResultsJson}). Workloads: {@link
 * ChangelogJobs}.
 *
 * <p>Usage: {@code mvn -pl flink-state-benchmarks exec:exec@changelog -Dscenario.args="--workload
 * value --records 20000000 --latency-median-ms 5 --tail-ms 1000 --tail-fraction 0.01 --json
 * target/changelog-value.json"} (default records: 20M for value, 2M for window; also {@code
 * --parallelism}, {@code --materialize-interval}).
 *
 * <p>Not thread-safe; one configuration at a time.
 */
public final class ChangelogScenario {

    private ChangelogScenario() {}

    /** The scenario's flags. */
    static Args args() {
        return Args.of("ChangelogScenario")
                .flag("workload", ChangelogJobs.VALUE, "value or window")
                .flag(
                        "records",
                        "default",
                        "load records (default: 20000000 value, 2000000 window)")
                .flag("latency-median-ms", "5", "median upload latency of the simulated DFS")
                .flag("tail-ms", "1000", "upload latency of the tail")
                .flag("tail-fraction", "0.01", "fraction of uploads in the tail")
                .flag("parallelism", "2", "job parallelism and slots")
                .flag(
                        "seed",
                        "random",
                        "seed of the simulated DFS latencies (a number; default: a new one per run)")
                .flag("materialize-interval", "10 s", "changelog materialization interval")
                .flag(
                        "configs",
                        String.join(",", ChangelogConfigs.NAMES),
                        "comma-separated subset of " + ChangelogConfigs.NAMES)
                .flag(
                        "dstl-options",
                        "",
                        "extra options of dfs-batched, key=value pairs separated by ';'")
                .flag("json", "default", "result file (default: target/changelog-<workload>.json)");
    }

    public static void main(String[] argv) throws Exception {
        Args flags = args().parseOrExit(argv);
        String workload = flags.get("workload");
        if (!workload.equals(ChangelogJobs.VALUE) && !workload.equals(ChangelogJobs.WINDOW)) {
            throw new IllegalArgumentException(
                    "--workload must be value or window\n" + args().usage());
        }
        // Defaults sized for ~1 minute of load per configuration on 2 cores.
        long records =
                flags.isSet("records")
                        ? flags.getLong("records")
                        : workload.equals(ChangelogJobs.WINDOW) ? 2_000_000 : 20_000_000;
        DfsLatency latency =
                new DfsLatency(
                        flags.getLong("latency-median-ms"),
                        flags.getLong("tail-ms"),
                        flags.getDouble("tail-fraction"),
                        flags.get("seed").equals("random")
                                ? System.nanoTime()
                                : flags.getLong("seed"));
        System.out.println("simulated DFS latency seed: " + latency.seed());
        int parallelism = flags.getInt("parallelism");
        String materialize = flags.get("materialize-interval");
        File json =
                new File(
                        flags.isSet("json")
                                ? flags.get("json")
                                : "target/changelog-" + workload + ".json");

        File root = Files.createTempDirectory("changelog-scenario").toFile();
        List<ChangelogResult> results = new ArrayList<>();
        List<String> configs = List.of(flags.get("configs").split(","));
        if (!ChangelogConfigs.NAMES.containsAll(configs) || !configs.contains("filesystem")) {
            throw new IllegalArgumentException(
                    "--configs must be a subset of "
                            + ChangelogConfigs.NAMES
                            + " that contains filesystem (the baseline of the ratios)");
        }
        for (String name : configs) {
            File dstl = new File(root, name + "-dstl");
            dstl.mkdirs();
            Configuration config =
                    ChangelogConfigs.of(
                            name,
                            dstl,
                            new File(root, name + "-checkpoints"),
                            materialize,
                            flags.get("dstl-options"));
            ChangelogResult r =
                    ChangelogRun.run(name, workload, records, parallelism, config, dstl, latency);
            results.add(r);
            System.out.printf(Locale.ROOT, "%-12s done: %s%n", name, r);
        }
        ChangelogTable.print(workload, results);
        ChangelogResultsJson.write(
                json,
                workload,
                records,
                parallelism,
                latency.medianMs(),
                latency.tailMs(),
                latency.tailFraction(),
                materialize,
                results);
        System.out.println("JSON written to " + json.getAbsolutePath());
        // Exit explicitly: Flink's own 'filesystem' DSTL (FsStateChangelogStorage, via
        // TaskChangelogRegistry.defaultChangelogRegistry) discards files on an
        // Executors.newFixedThreadPool with the JDK's non-daemon 'pool-N-thread-1' threads and
        // never
        // shuts it down, so once it deleted a file this JVM would stay alive after the work is
        // done.
        System.exit(0);
    }
}
