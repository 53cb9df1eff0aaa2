package io.github.flinkstate.benchmarks.scenario;

import io.github.flinkstate.benchmarks.common.Args;
import io.github.flinkstate.benchmarks.common.BackendSpec;
import io.github.flinkstate.benchmarks.report.MachineInfo;
import io.github.flinkstate.benchmarks.scenario.rescale.RescaleCluster;
import io.github.flinkstate.benchmarks.scenario.rescale.RescaleResultsJson;
import io.github.flinkstate.benchmarks.scenario.rescale.RescaleRun;
import io.github.flinkstate.benchmarks.scenario.rescale.RestoreMeasurement;
import io.github.flinkstate.benchmarks.scenario.rescale.RetainedCheckpoint;
import io.github.flinkstate.benchmarks.scenario.rescale.Transition;
import java.io.File;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.util.FileUtils;

/**
 * The FLIP-447 rescaling matrix as a scenario: per backend and per transition {@code p1->p2}, a job
 * at parallelism p1 (max parallelism 128) writes {@code --state-mb} of keyed {@code
 * ValueState<byte[]>} ({@code --value-bytes} per key), takes one retained checkpoint (incremental
 * for RocksDB) and is cancelled; a second job restores that checkpoint at p2, and the restore time
 * of every subtask of the keyed operator is measured (Flink's INITIALIZING to RUNNING interval),
 * with Flink's own restore statistics alongside. The restored job then reads every key once and the
 * scenario fails unless every value is present and right. One checkpoint per (backend, p1) is
 * reused by all transitions from p1 (restores are NO_CLAIM and leave it untouched).
 *
 * <p>Prints per run the max and per-subtask restore times, then a matrix of max restore times, and
 * writes JSON ({@link RescaleResultsJson}). Backends: {@code hashmap}, {@code rocksdb} (Flink's
 * default restore), {@code rocksdb-ingest} (IngestDB restore mode), {@code lru:<entries>} (our LRU
 * cache over RocksDB).
 *
 * <p>Usage: {@code mvn -pl flink-state-benchmarks exec:exec@rescale -Dscenario.args="--state-mb 64
 * --value-bytes 256 --transitions 1-2,2-1,2-8,8-2,2-3,3-2 --backends
 * hashmap,rocksdb,rocksdb-ingest,lru:10000 --repeats 3 --json ../docs/results/rescale.json"} (the
 * defaults, but for {@code --json}, whose default is {@code target/rescale.json}). {@code
 * --repeats} restores each checkpoint that many times; the report uses the median.
 *
 * <p>Not thread-safe; runs one job at a time.
 */
public final class RescaleScenario {

    static final String DEFAULT_BACKENDS = "hashmap,rocksdb,rocksdb-ingest,lru:10000";

    private RescaleScenario() {}

    public static void main(String[] args) {
        // ForSt leaves native threads attached to the JVM as non-daemon threads after its DBs are
        // closed, which would keep this JVM alive: exit explicitly, also after a failure.
        int status = 1;
        try {
            runMain(args);
            status = 0;
        } catch (Throwable t) {
            t.printStackTrace();
        } finally {
            System.exit(status);
        }
    }

    private static void runMain(String[] args) throws Exception {
        Args flags = args().parseOrExit(args);
        Map<String, String> settings = BackendSpec.parseSettings(flags.get("backend-conf"));
        List<BackendSpec> backends = new ArrayList<>();
        BackendSpec.parseList(flags.get("backends")).forEach(b -> backends.add(b.with(settings)));
        List<Transition> transitions = Transition.parseList(flags.get("transitions"));
        long stateBytes = (long) (flags.getDouble("state-mb") * 1024 * 1024);
        int valueBytes = flags.getInt("value-bytes");
        int repeats = flags.getInt("repeats");
        RecoveryClaimMode claimMode = claimMode(flags.get("claim-mode"));
        Duration readDeadline = Duration.ofSeconds(flags.getLong("read-deadline-s"));
        File json = new File(flags.get("json"));
        long keys = Math.max(1, stateBytes / valueBytes);

        System.out.printf(
                Locale.ROOT,
                "%d keys x %d bytes = %.1f MiB of keyed state, max parallelism 128, %s restores%n",
                keys,
                valueBytes,
                keys * (double) valueBytes / 1048576,
                claimMode);
        // One backend at a time, the JSON rewritten after each: an interrupted run keeps the
        // backends it finished.
        List<RescaleRun> runs = new ArrayList<>();
        for (BackendSpec backend : backends) {
            runs.addAll(
                    run(
                            List.of(backend),
                            transitions,
                            keys,
                            valueBytes,
                            repeats,
                            claimMode,
                            readDeadline));
            RescaleResultsJson.write(
                    json,
                    MachineInfo.current(),
                    keys * valueBytes,
                    valueBytes,
                    keys,
                    repeats,
                    claimMode,
                    runs);
        }
        printMatrix(runs, transitions);
        System.out.println("JSON written to " + json.getAbsolutePath());
    }

    /**
     * {@link #run(List, List, long, int, int, RecoveryClaimMode, Duration)} with NO_CLAIM restores
     * and a 30-minute read deadline.
     */
    public static List<RescaleRun> run(
            List<BackendSpec> backends,
            List<Transition> transitions,
            long keys,
            int valueBytes,
            int repeats)
            throws Exception {
        return run(
                backends,
                transitions,
                keys,
                valueBytes,
                repeats,
                RecoveryClaimMode.NO_CLAIM,
                Duration.ofMinutes(30));
    }

    /**
     * Runs the matrix: for every backend, one cluster; for every distinct p1, one load; for every
     * transition and repeat, one verified restore in {@code claimMode}. Throws on the first lost
     * key. A read of every key after a restore that is still running after {@code readDeadline} is
     * stopped; its measurement says how many keys it verified.
     */
    public static List<RescaleRun> run(
            List<BackendSpec> backends,
            List<Transition> transitions,
            long keys,
            int valueBytes,
            int repeats,
            RecoveryClaimMode claimMode,
            Duration readDeadline)
            throws Exception {
        int slots = transitions.stream().mapToInt(t -> Math.max(t.from(), t.to())).max().orElse(1);
        List<RescaleRun> runs = new ArrayList<>();
        for (BackendSpec backend : backends) {
            File dir =
                    Files.createTempDirectory(
                                    "rescale-" + backend.name().replaceAll("[^a-z0-9]", "_"))
                            .toFile();
            try (RescaleCluster cluster =
                    new RescaleCluster(backend, dir, slots).readDeadline(readDeadline)) {
                Map<Integer, RetainedCheckpoint> checkpoints = new HashMap<>();
                for (Transition t : transitions) {
                    RetainedCheckpoint cp = checkpoints.get(t.from());
                    if (cp == null) {
                        cp = cluster.load(t.from(), keys, valueBytes);
                        checkpoints.put(t.from(), cp);
                        System.out.printf(
                                Locale.ROOT,
                                "%-18s loaded at p=%d: checkpoint %d, %.1f MiB%n",
                                backend.name(),
                                t.from(),
                                cp.checkpointId(),
                                cp.fullBytes() / 1048576.0);
                    }
                    for (int r = 0; r < repeats; r++) {
                        RestoreMeasurement m =
                                cluster.restore(cp, t.to(), keys, valueBytes, claimMode);
                        RescaleRun run = new RescaleRun(backend.name(), t, r, cp, m);
                        runs.add(run);
                        printRun(run);
                    }
                }
            } finally {
                FileUtils.deleteDirectoryQuietly(dir);
            }
        }
        return runs;
    }

    private static void printRun(RescaleRun run) {
        RestoreMeasurement m = run.measurement();
        System.out.printf(
                Locale.ROOT,
                "%-18s %5s  max %6d ms  per subtask %s ms  restored %s  (%s %d keys verified, read in %d ms)%n",
                run.backend(),
                run.transition(),
                m.maxRestoreMs(),
                m.subtaskRestoreMs(),
                m.restoredBytes() < 0
                        ? "n/a"
                        : String.format(Locale.ROOT, "%.1f MiB", m.restoredBytes() / 1048576.0),
                m.readComplete() ? "all" : "READ STOPPED AT ITS DEADLINE:",
                m.keysVerified(),
                m.readAllMs());
    }

    /** Transitions by backends: median over repeats of the max restore time. */
    private static void printMatrix(List<RescaleRun> runs, List<Transition> transitions) {
        Set<String> backends = new LinkedHashSet<>();
        runs.forEach(r -> backends.add(r.backend()));
        System.out.printf(
                Locale.ROOT,
                "%nmax restore time per subtask, ms (median over repeats)%n%-8s",
                "p1->p2");
        backends.forEach(b -> System.out.printf(Locale.ROOT, " %18s", b));
        System.out.println();
        for (Transition t : new LinkedHashSet<>(transitions)) {
            System.out.printf(Locale.ROOT, "%-8s", t);
            for (String b : backends) {
                List<Long> maxima = new ArrayList<>();
                runs.stream()
                        .filter(r -> r.backend().equals(b) && r.transition().equals(t))
                        .forEach(r -> maxima.add(r.measurement().maxRestoreMs()));
                maxima.sort(Long::compare);
                System.out.printf(
                        Locale.ROOT,
                        " %18s",
                        maxima.isEmpty() ? "-" : maxima.get(maxima.size() / 2));
            }
            System.out.println();
        }
    }

    /**
     * Parses {@code no_claim} / {@code claim} (any case, '-' or '_'); Flink's deprecated LEGACY
     * mode is refused.
     */
    static RecoveryClaimMode claimMode(String value) {
        String v = value.trim().toUpperCase(Locale.ROOT).replace('-', '_');
        for (RecoveryClaimMode mode :
                List.of(RecoveryClaimMode.NO_CLAIM, RecoveryClaimMode.CLAIM)) {
            if (mode.name().equals(v)) {
                return mode;
            }
        }
        throw new IllegalArgumentException(
                "Unknown claim mode '" + value + "'; use no_claim or claim");
    }

    /** The scenario's flags. */
    static Args args() {
        return Args.of("RescaleScenario")
                .flag("backends", DEFAULT_BACKENDS, "backends to compare")
                .flag("transitions", Transition.FLIP_447_MATRIX, "p1-p2 rescaling transitions")
                .flag("state-mb", "64", "keyed state to write, MiB")
                .flag("value-bytes", "256", "bytes per value")
                .flag("repeats", "3", "restores per checkpoint and transition (median reported)")
                .flag("claim-mode", "no_claim", "restore mode of every restore: no_claim or claim")
                .flag("backend-conf", "", "extra settings for every backend: k1=v1;k2=v2")
                .flag(
                        "read-deadline-s",
                        "1800",
                        "stop the read of every key after a restore after this many seconds")
                .flag("json", "target/rescale.json", "result file");
    }
}
