package io.github.flinkstate.benchmarks.demo;

import io.github.flinkstate.benchmarks.common.Args;
import io.github.flinkstate.benchmarks.common.BackendSpec;
import io.github.flinkstate.benchmarks.common.JobStats;
import io.github.flinkstate.benchmarks.common.MiniClusterJobRunner;
import io.github.flinkstate.testing.job.ExactlyOnceJob;
import io.github.flinkstate.testing.job.KeyFunction;
import io.github.flinkstate.testing.job.KeySummary;
import io.github.flinkstate.testing.job.ResultCheck;
import java.io.File;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.flink.configuration.Configuration;

/**
 * The project's demo: real streaming jobs on an embedded Flink MiniCluster, per state backend, with
 * checkpoints every 200 ms to a local directory, built with the test kit's {@link ExactlyOnceJob}
 * (a checkpointed sequence source, the FLIP-325 key pattern over 1000 keys, and an exact per-key
 * check computed from the input alone). Per backend:
 *
 * <ol>
 *   <li>a <b>recovery run</b>: value, list, map, reducing and aggregating state plus a timer per
 *       key, one injected failure after a completed checkpoint, a restart from it, and the exact
 *       check of every state of every key;
 *   <li><b>throughput runs</b>: the FLIP-325 count-per-key job (value state), no failure, repeated
 *       until at least {@code --min-runs} runs and {@code --min-seconds} of job time; the table
 *       shows their median records/s and its spread (min..max), and every run is checked exactly.
 * </ol>
 *
 * The recovery run also warms the JVM up, so the first backend is not measured cold. Prints one
 * table and what its figures are good for; exits with 1 if a check fails.
 *
 * <p>Usage: {@code DemoJob [--records N] [--parallelism P] [--backends list] [--min-runs R]
 * [--min-seconds S]} ({@link #args()}).
 */
public final class DemoJob {

    static final String DEFAULT_BACKENDS =
            "hashmap,rocksdb,lru:100000,lru:250,changelog:rocksdb,changelog:lru:100000";

    /** At most this many throughput runs per backend, whatever --min-seconds asks. */
    private static final int MAX_RUNS = 10;

    private DemoJob() {}

    /** The demo's flags. */
    static Args args() {
        return Args.of("DemoJob")
                .flag("records", "2000000", "records per run")
                .flag("parallelism", "2", "job parallelism and slots")
                .flag("backends", DEFAULT_BACKENDS, "backends to run")
                .flag("min-runs", "3", "throughput runs per backend, at least")
                .flag("min-seconds", "4", "job time of the throughput runs per backend, at least");
    }

    public static void main(String[] argv) throws Exception {
        Args flags = args().parseOrExit(argv);
        long records = flags.getLong("records");
        int parallelism = flags.getInt("parallelism");
        List<BackendSpec> backends = BackendSpec.parseList(flags.get("backends"));
        int minRuns = flags.getInt("min-runs");
        long minMillis = (long) (flags.getDouble("min-seconds") * 1000);

        File checkpointRoot = Files.createTempDirectory("flinkstate-demo").toFile();
        System.out.printf(
                Locale.ROOT,
                "FLIP-325 key pattern (1000 keys), %,d records per run, parallelism %d,"
                        + " checkpoints every 200 ms to %s%n%n",
                records,
                parallelism,
                checkpointRoot);
        Map<Long, KeySummary> expectedAll =
                ExactlyOnceJob.builder(records).keys(KeyFunction.flip325()).build().expected();
        Map<Long, KeySummary> expectedCounts =
                ExactlyOnceJob.builder(records)
                        .keys(KeyFunction.flip325())
                        .countOnly()
                        .build()
                        .expected();

        List<DemoRow> rows = new ArrayList<>();
        boolean allExact = true;
        for (BackendSpec backend : backends) {
            File dir = new File(checkpointRoot, backend.name().replaceAll("[^a-z0-9]", "_"));
            JobStats recovery;
            ResultCheck recoveryCheck;
            boolean failed;
            try (ExactlyOnceJob job =
                    ExactlyOnceJob.builder(records)
                            .keys(KeyFunction.flip325())
                            .failOnceAfter(records / 2)
                            .name(backend.name())
                            .build()) {
                recovery =
                        MiniClusterJobRunner.run(
                                backend.name(),
                                records,
                                config(backend, new File(dir, "recovery")),
                                parallelism,
                                job::addTo);
                recoveryCheck = ResultCheck.compare(expectedAll, job.run().finals());
                failed = job.run().failed();
            }
            List<JobStats> timed = new ArrayList<>();
            List<ResultCheck> timedChecks = new ArrayList<>();
            long jobMillis = 0;
            while (timed.size() < MAX_RUNS && (timed.size() < minRuns || jobMillis < minMillis)) {
                try (ExactlyOnceJob job =
                        ExactlyOnceJob.builder(records)
                                .keys(KeyFunction.flip325())
                                .countOnly()
                                .name(backend.name())
                                .build()) {
                    JobStats s =
                            MiniClusterJobRunner.run(
                                    backend.name(),
                                    records,
                                    config(backend, new File(dir, "run" + timed.size())),
                                    parallelism,
                                    job::addTo);
                    timed.add(s);
                    jobMillis += s.netRuntimeMillis();
                    timedChecks.add(ResultCheck.compare(expectedCounts, job.run().finals()));
                }
            }
            DemoRow row =
                    new DemoRow(
                            backend.name(), recovery, recoveryCheck, failed, timed, timedChecks);
            allExact &= row.exact();
            rows.add(row);
            System.out.println(row.progressLine());
        }
        System.out.println();
        System.out.print(DemoRow.table(rows));
        System.out.println();
        System.out.print(DemoRow.legend(records, minRuns));
        System.out.println();
        System.out.println(
                allExact
                        ? "All backends recovered with exactly the expected state for every key."
                        : "Some backend did NOT produce exact results (see the table).");
        if (!allExact) {
            System.exit(1);
        }
    }

    private static Configuration config(BackendSpec backend, File checkpoints) {
        Configuration config = new Configuration();
        backend.applyTo(config);
        config.setString("execution.checkpointing.interval", "200 ms");
        config.setString("execution.checkpointing.dir", checkpoints.toURI().toString());
        config.setString("restart-strategy.type", "fixed-delay");
        config.setString("restart-strategy.fixed-delay.attempts", "3");
        config.setString("restart-strategy.fixed-delay.delay", "100 ms");
        config.setString("pipeline.object-reuse", "true");
        return config;
    }
}
