package io.github.flinkstate.benchmarks.scenario;

import io.github.flinkstate.benchmarks.common.Args;
import io.github.flinkstate.benchmarks.common.BackendSpec;
import io.github.flinkstate.benchmarks.scenario.checkpoint.CheckpointDurationResult;
import io.github.flinkstate.benchmarks.scenario.checkpoint.CheckpointDurationRun;
import io.github.flinkstate.benchmarks.scenario.checkpoint.CheckpointDurationTable;
import io.github.flinkstate.benchmarks.scenario.checkpoint.NoClaimRestoreResult;
import io.github.flinkstate.benchmarks.scenario.checkpoint.RemoteDfsProfile;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.apache.flink.util.FileUtils;

/**
 * Checkpoint duration of a steadily updated job at several state sizes, for each backend in the
 * same run (issue 10: "checkpoint duration growing at most 1.2x from 100 MB to 2 GB"). Each (round,
 * size, backend) is one {@link CheckpointDurationRun} on a fresh MiniCluster; backends alternate
 * within a round so that drift of the machine hits them alike. Before the measured runs, each
 * backend loads a small state once, unmeasured ({@code --jvm-warmup-mb}): the first run in a JVM
 * pays class loading and JIT compilation of Flink's job code for every backend after it, and that
 * made the load of whichever backend came first 1.5-3x slower. Prints a Markdown table and writes
 * it to {@code --out} if given.
 *
 * <p>Usage: {@code mvn -pl flink-state-benchmarks exec:exec@checkpoint-duration
 * -Dscenario.args="--sizes-mb 100,2048 --rounds 2"}.
 */
public final class CheckpointDurationScenario {

    private CheckpointDurationScenario() {}

    public static void main(String[] argv) throws Exception {
        Args args =
                Args.of("CheckpointDurationScenario")
                        .flag("backends", "disaggregated,rocksdb,forst", "backends to compare")
                        .flag("sizes-mb", "100,2048", "state sizes in MiB, comma-separated")
                        .flag("value-bytes", "1024", "bytes per value (keys = size / this)")
                        .flag("updates-per-second", "5000", "steady updates after the load")
                        .flag("pause-ms", "2000", "steady updates before each checkpoint")
                        .flag("warmup", "2", "checkpoints after the first one not measured")
                        .flag("checkpoints", "10", "measured checkpoints per run")
                        .flag("rounds", "1", "runs per backend and size")
                        .flag("parallelism", "2", "keyed operator parallelism (= slots)")
                        .flag(
                                "no-claim-restore",
                                "false",
                                "true: measure the first checkpoints after a NO_CLAIM resume instead")
                        .flag(
                                "jvm-warmup-mb",
                                "64",
                                "before the measured runs, one unmeasured run of every backend"
                                        + " loading this many MiB (0: none)")
                        .flag("backend-conf", "", "extra settings for every backend: k1=v1;k2=v2")
                        .flag(
                                "dfs-latency-ms",
                                "0",
                                "above 0: checkpoints (and primary directories under them) go to the"
                                        + " test kit's inject:// file system, each create, close,"
                                        + " open, read and metadata call delayed this long")
                        .flag(
                                "dfs-bandwidth-mbps",
                                "0",
                                "above 0: inject:// as above, reads and writes sharing this many"
                                        + " MB/s")
                        .flag("out", "", "Markdown file for the table (empty: stdout only)")
                        .parseOrExit(argv);
        java.util.Map<String, String> settings =
                BackendSpec.parseSettings(args.get("backend-conf"));
        List<BackendSpec> backends = new ArrayList<>();
        BackendSpec.parseList(args.get("backends")).forEach(b -> backends.add(b.with(settings)));
        List<Long> sizes = new ArrayList<>();
        for (String s : args.get("sizes-mb").split(",")) {
            sizes.add(Long.parseLong(s.trim()) << 20);
        }
        boolean noClaim = Boolean.parseBoolean(args.get("no-claim-restore"));
        Function<File, String> checkpointUri =
                RemoteDfsProfile.install(
                        args.getInt("dfs-latency-ms"), args.getLong("dfs-bandwidth-mbps"));
        long warmupBytes = args.getLong("jvm-warmup-mb") << 20;
        for (BackendSpec backend : warmupBytes > 0 ? backends : List.<BackendSpec>of()) {
            File dir = Files.createTempDirectory("flinkstate-cp-warmup").toFile();
            try {
                CheckpointDurationResult r =
                        run(backend, args, Duration.ofMillis(200), 0, 1, checkpointUri)
                                .run(warmupBytes, dir);
                System.out.printf(
                        "JVM warm-up %s %d MiB (not measured): load %d ms%n",
                        r.backend(), warmupBytes >> 20, r.loadMillis());
            } finally {
                FileUtils.deleteDirectoryQuietly(dir);
            }
        }
        List<CheckpointDurationResult> results = new ArrayList<>();
        List<NoClaimRestoreResult> resumes = new ArrayList<>();
        for (int round = 1; round <= args.getInt("rounds"); round++) {
            for (long size : sizes) {
                for (BackendSpec backend : backends) {
                    File dir = Files.createTempDirectory("flinkstate-cp-duration").toFile();
                    try {
                        CheckpointDurationRun run =
                                run(
                                        backend,
                                        args,
                                        Duration.ofMillis(args.getLong("pause-ms")),
                                        args.getInt("warmup"),
                                        args.getInt("checkpoints"),
                                        checkpointUri);
                        if (noClaim) {
                            NoClaimRestoreResult r = run.runNoClaimRestore(size, dir);
                            resumes.add(r);
                            System.out.printf(
                                    "round %d %s %d MiB, NO_CLAIM resume: first %d ms (%d MiB),"
                                            + " longest stall %d ms, later %s%n",
                                    round,
                                    r.backend(),
                                    size >> 20,
                                    r.firstMillis(),
                                    r.firstCheckpointedBytes() >> 20,
                                    r.longestStallMillis(),
                                    r.laterMillis());
                            continue;
                        }
                        CheckpointDurationResult r = run.run(size, dir);
                        results.add(r);
                        System.out.printf(
                                "round %d %s %d MiB: load %d ms, first %d ms, p50 %d ms, max %d ms,"
                                        + " sync p50 %d ms, sync max %d ms, durations %s%n",
                                round,
                                r.backend(),
                                size >> 20,
                                r.loadMillis(),
                                r.firstMillis(),
                                r.p50Millis(),
                                r.maxMillis(),
                                r.p50SyncMillis(),
                                r.maxSyncMillis(),
                                r.durationsMillis());
                    } finally {
                        FileUtils.deleteDirectoryQuietly(dir);
                    }
                }
            }
        }
        String table =
                noClaim
                        ? CheckpointDurationTable.noClaimMarkdown(resumes)
                        : CheckpointDurationTable.markdown(results, args);
        System.out.println(table);
        if (!args.get("out").isEmpty()) {
            Files.writeString(Path.of(args.get("out")), table);
        }
        System.exit(0);
    }

    /** A run of {@code backend} with the job settings of {@code args}. */
    private static CheckpointDurationRun run(
            BackendSpec backend,
            Args args,
            Duration pause,
            int warmup,
            int checkpoints,
            Function<File, String> checkpointUri) {
        return new CheckpointDurationRun(
                backend,
                args.getInt("parallelism"),
                args.getInt("value-bytes"),
                args.getInt("updates-per-second"),
                pause,
                warmup,
                checkpoints,
                checkpointUri);
    }
}
