package io.github.flinkstate.benchmarks.scenario;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.github.flinkstate.benchmarks.common.Args;
import io.github.flinkstate.benchmarks.scenario.remote.RemoteReadChart;
import io.github.flinkstate.benchmarks.scenario.remote.RemoteReadResult;
import io.github.flinkstate.benchmarks.scenario.remote.RemoteReadRun;
import io.github.flinkstate.benchmarks.scenario.remote.RemoteReadSettings;
import io.github.flinkstate.benchmarks.scenario.remote.RemoteReadTable;
import io.github.flinkstate.benchmarks.scenario.remote.RemoteReadTarget;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.flink.util.FileUtils;

/**
 * Reads after a restore with the primary copy remote (issue 11): our disaggregated backend and
 * ForSt, each with its local disk cache at several budgets (shares of the state), against RocksDB
 * with everything local, on the test kit's latency file system. For each round, key distribution
 * and backend configuration, one {@code RemoteReadRun}: load, checkpoint, restore cold, then gets
 * on one thread, throughput per bucket from the restore's start. Backends alternate within a round
 * so that drift of the machine hits them alike. Prints a Markdown table (also to {@code --out}) and
 * writes every run's buckets as JSON ({@code --json}).
 *
 * <p>Usage: {@code mvn -pl flink-state-benchmarks exec:exec@remote-read -Dscenario.args="--rounds
 * 3"}.
 */
public final class RemoteReadScenario {

    private RemoteReadScenario() {}

    public static void main(String[] argv) throws Exception {
        Args args =
                Args.of("RemoteReadScenario")
                        .flag("backends", "disaggregated,forst,rocksdb", "backends to compare")
                        .flag("budgets", "10,50,100", "local cache budgets, % of the state")
                        .flag("keys", "uniform", "key distributions: uniform,zipf")
                        .flag("key-count", "600000", "keys of the value state")
                        .flag("value-bytes", "128", "bytes per value")
                        .flag("latency-ms", "2", "remote read, open and status latency")
                        .flag("bandwidth-mbps", "100", "remote bandwidth, MB/s")
                        .flag("managed-mb", "8", "managed memory of the task, MiB")
                        .flag("seconds", "30", "measured seconds from the restore's start")
                        .flag("bucket-ms", "500", "throughput bucket width")
                        .flag("rounds", "1", "runs per configuration")
                        .flag(
                                "jit-warmup",
                                "true",
                                "first run every configuration once, small and short, and discard"
                                        + " it (so round 1 does not measure the JIT)")
                        .flag(
                                "local-cache-mmap",
                                "true",
                                "our backend reads its whole-file local copies through memory"
                                        + " mappings (false: with system calls)")
                        .flag(
                                "gets-before-checkpoint",
                                "0",
                                "gets on the loaded backend (no latency) before its checkpoint, as"
                                        + " a job runs between checkpoints (0: checkpoint right"
                                        + " after the load)")
                        .flag(
                                "local-cache-hint",
                                "true",
                                "our backend's checkpoints record the cache hint for the warm-up;"
                                        + " true,false runs ours both ways")
                        .flag("seed", "42", "seed of keys and values")
                        .flag("out", "", "Markdown file for the table (empty: stdout only)")
                        .flag("json", "", "JSON file for every run's results (empty: none)")
                        .flag(
                                "chart",
                                "",
                                "SVG charts of throughput over time: <this>-<keys>.svg (empty: none)")
                        .parseOrExit(argv);
        List<RemoteReadTarget> targets = new ArrayList<>();
        for (String backend : args.get("backends").split(",")) {
            if (backend.trim().equals("rocksdb")) {
                targets.add(new RemoteReadTarget("rocksdb", 0));
                continue;
            }
            for (String budget : args.get("budgets").split(",")) {
                for (String hint : args.get("local-cache-hint").split(",")) {
                    if (!backend.trim().equals("disaggregated") && !hint.trim().equals("true")) {
                        continue; // the hint is our backend's
                    }
                    targets.add(
                            new RemoteReadTarget(
                                    backend.trim(),
                                    Integer.parseInt(budget.trim()),
                                    Boolean.parseBoolean(args.get("local-cache-mmap")),
                                    Boolean.parseBoolean(hint.trim())));
                }
            }
        }
        if (Boolean.parseBoolean(args.get("jit-warmup"))) {
            RemoteReadRun warm =
                    new RemoteReadRun(
                            new RemoteReadSettings(
                                    100_000,
                                    args.getInt("value-bytes"),
                                    args.getInt("latency-ms"),
                                    args.getInt("bandwidth-mbps"),
                                    args.getLong("managed-mb") << 20,
                                    5,
                                    args.getInt("bucket-ms"),
                                    "uniform",
                                    args.getLong("seed"),
                                    Math.min(100_000, args.getInt("gets-before-checkpoint"))));
            for (RemoteReadTarget target : targets) {
                File dir = Files.createTempDirectory("flinkstate-remote-read").toFile();
                try {
                    warm.run(target, 0, dir);
                } finally {
                    FileUtils.deleteDirectoryQuietly(dir);
                }
            }
            System.out.println("JIT warm-up runs done (not reported)");
        }
        List<RemoteReadResult> results = new ArrayList<>();
        for (int round = 1; round <= args.getInt("rounds"); round++) {
            for (String keys : args.get("keys").split(",")) {
                RemoteReadRun run =
                        new RemoteReadRun(
                                new RemoteReadSettings(
                                        args.getInt("key-count"),
                                        args.getInt("value-bytes"),
                                        args.getInt("latency-ms"),
                                        args.getInt("bandwidth-mbps"),
                                        args.getLong("managed-mb") << 20,
                                        args.getInt("seconds"),
                                        args.getInt("bucket-ms"),
                                        keys.trim(),
                                        args.getLong("seed"),
                                        args.getInt("gets-before-checkpoint")));
                for (RemoteReadTarget target : targets) {
                    File dir = Files.createTempDirectory("flinkstate-remote-read").toFile();
                    try {
                        RemoteReadResult r = run.run(target, round, dir);
                        results.add(r);
                        System.out.printf(
                                Locale.ROOT,
                                "round %d %s %s: state %,d bytes, restore %d ms, first get %d ms,"
                                        + " steady %,.0f gets/s, 90%% at %d ms, first 5 s %,.0f"
                                        + " gets/s, %,d remote reads (%,d bytes)%n",
                                round,
                                r.keys(),
                                r.label(),
                                r.stateBytes(),
                                r.restoreMillis(),
                                r.firstGetMillis(),
                                r.steadyOpsPerSecond(),
                                r.millisToReach(0.9),
                                r.meanOpsPerSecond(5),
                                r.primaryReads(),
                                r.primaryReadBytes());
                    } finally {
                        FileUtils.deleteDirectoryQuietly(dir);
                    }
                }
            }
        }
        String table =
                RemoteReadTable.markdown(
                        results,
                        String.format(
                                Locale.ROOT,
                                "Remote reads after a restore: %s keys x %s bytes, %s ms per remote"
                                        + " read, %s MB/s, %s MiB managed memory, %s s per run,"
                                        + " %s round(s), %s gets before the checkpoint",
                                args.get("key-count"),
                                args.get("value-bytes"),
                                args.get("latency-ms"),
                                args.get("bandwidth-mbps"),
                                args.get("managed-mb"),
                                args.get("seconds"),
                                args.get("rounds"),
                                args.get("gets-before-checkpoint")));
        System.out.println(table);
        if (!args.get("out").isEmpty()) {
            Files.writeString(Path.of(args.get("out")), table);
        }
        if (!args.get("json").isEmpty()) {
            new ObjectMapper()
                    .enable(SerializationFeature.INDENT_OUTPUT)
                    .writeValue(new File(args.get("json")), results);
        }
        if (!args.get("chart").isEmpty()) {
            for (String keys : args.get("keys").split(",")) {
                RemoteReadChart.write(
                        results,
                        keys.trim(),
                        String.format(
                                Locale.ROOT,
                                "Gets after a restore, %s keys, %s ms remote reads",
                                keys.trim(),
                                args.get("latency-ms")),
                        Path.of(args.get("chart") + "-" + keys.trim() + ".svg"));
            }
        }
        System.exit(0);
    }
}
