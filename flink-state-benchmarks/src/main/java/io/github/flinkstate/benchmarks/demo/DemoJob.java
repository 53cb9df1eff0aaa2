package io.github.flinkstate.benchmarks.demo;

import io.github.flinkstate.benchmarks.common.Args;
import io.github.flinkstate.benchmarks.common.BackendSpec;
import io.github.flinkstate.benchmarks.common.CountPerKeyRun;
import io.github.flinkstate.benchmarks.common.JobStats;
import io.github.flinkstate.benchmarks.common.MiniClusterJobRunner;
import io.github.flinkstate.testing.job.ExactlyOnceJob;
import io.github.flinkstate.testing.job.ExpectedResults;
import io.github.flinkstate.testing.job.KeyFunction;
import io.github.flinkstate.testing.job.KeySummary;
import io.github.flinkstate.testing.job.ResultCheck;
import io.github.flinkstate.testing.job.Throttle;
import java.io.File;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.minicluster.MiniCluster;

/**
 * The project's demo: real streaming jobs on an embedded Flink MiniCluster, per state backend, with
 * checkpoints every 200 ms to a local directory, built with the test kit's {@link ExactlyOnceJob}
 * (a checkpointed sequence source, the FLIP-325 key pattern over 1000 keys, and an exact per-key
 * check computed from the input alone). Per backend:
 *
 * <ol>
 *   <li>a <b>recovery run</b>: value, list, map, reducing and aggregating state plus a timer per
 *       key, throttled until the first checkpoint, one injected failure after a completed
 *       checkpoint, a restart from it, and the exact check of every state of every key;
 *   <li><b>throughput runs</b>: the FLIP-325 count-per-key job (value state), no failure, on one
 *       warm cluster per backend: a calibration run of {@code --records} records, then {@code
 *       --runs} runs, each long enough to process for at least {@code --run-seconds} at the
 *       calibrated rate (so a fast backend gets more records per run, not a noisier figure); the
 *       table shows their median records/s (processing time: first record to last end-of-input
 *       timer) and its spread, and every run is checked exactly.
 * </ol>
 *
 * The recovery run also warms the JVM up, so the first backend is not measured cold. Prints one
 * table and what its figures are good for; exits with 1 if a check fails.
 *
 * <p>Usage: {@code DemoJob [--records N] [--parallelism P] [--backends list] [--runs R]
 * [--run-seconds S]} ({@link #args()}).
 */
public final class DemoJob {

    static final String DEFAULT_BACKENDS =
            "hashmap,rocksdb,disaggregated,lru:100000,lru:250,changelog:rocksdb,changelog:lru:100000";

    /** Upper bound of the records of one throughput run. */
    private static final long MAX_RUN_RECORDS = 50_000_000;

    private DemoJob() {}

    /** The demo's flags. */
    static Args args() {
        return Args.of("DemoJob")
                .flag("records", "2000000", "records per run")
                .flag("parallelism", "2", "job parallelism and slots")
                .flag(
                        "backends",
                        DEFAULT_BACKENDS,
                        "backends to run, comma-separated: hashmap, rocksdb, rocksdb-ingest,"
                                + " disaggregated, forst, lru:<entries> (over RocksDB),"
                                + " changelog:<backend>")
                .flag("runs", "3", "measured throughput runs per backend")
                .flag("run-seconds", "1", "processing time per throughput run, at least");
    }

    public static void main(String[] argv) throws Exception {
        Args flags = args().parseOrExit(argv);
        long records;
        int parallelism;
        List<BackendSpec> backends;
        int runs;
        long runNanos;
        try {
            records = flags.getLong("records");
            parallelism = flags.getInt("parallelism");
            backends = BackendSpec.parseList(flags.get("backends"));
            runs = flags.getInt("runs");
            double runSeconds = flags.getDouble("run-seconds");
            if (records <= 0 || parallelism <= 0 || runs <= 0 || !(runSeconds > 0)) {
                throw new IllegalArgumentException(
                        "--records, --parallelism, --runs and --run-seconds must be positive");
            }
            if (backends.isEmpty()) {
                throw new IllegalArgumentException("--backends names no backend");
            }
            runNanos = (long) (runSeconds * 1e9);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            if (!e.getMessage().contains(args().usage())) { // Args' own errors carry it
                System.err.println(args().usage());
            }
            System.exit(2);
            return;
        }

        File checkpointRoot = Files.createTempDirectory("flinkstate-demo").toFile();
        System.out.printf(
                Locale.ROOT,
                "FLIP-325 key pattern (1000 keys), %,d records per run, parallelism %d,"
                        + " checkpoints every 200 ms to %s%n%n",
                records,
                parallelism,
                checkpointRoot);
        Map<Long, KeySummary> expectedAll = ExpectedResults.compute(records, KeyFunction.flip325());

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
                            .throttle(Throttle.every(100).untilCheckpoints(1))
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
            List<CountPerKeyRun> timed = new ArrayList<>();
            CountPerKeyRun calibration;
            try (MiniCluster cluster =
                    MiniClusterJobRunner.startCluster(config(backend, dir), parallelism)) {
                // one run of --records warms the cluster up and sizes the measured runs
                calibration =
                        CountPerKeyRun.run(
                                cluster,
                                backend.name(),
                                records,
                                config(backend, new File(dir, "calibration")),
                                parallelism);
                long runRecords = recordsPerRun(calibration, records, runNanos);
                for (int i = 0; i < runs; i++) {
                    timed.add(
                            CountPerKeyRun.run(
                                    cluster,
                                    backend.name(),
                                    runRecords,
                                    config(backend, new File(dir, "run" + i)),
                                    parallelism));
                }
            }
            DemoRow row =
                    new DemoRow(
                            backend.name(), recovery, recoveryCheck, failed, calibration, timed);
            allExact &= row.exact();
            rows.add(row);
            System.out.println(row.progressLine());
        }
        System.out.println();
        System.out.print(DemoRow.table(rows));
        System.out.println();
        System.out.print(DemoRow.legend(runs));
        System.out.println();
        List<String> noFailure = new ArrayList<>();
        for (DemoRow row : rows) {
            if (!row.failureInjected()) {
                noFailure.add(row.backend());
            }
        }
        if (!allExact) {
            System.out.println("Some backend did NOT produce exact results (see the table).");
        } else if (noFailure.isEmpty()) {
            System.out.println(
                    "All backends recovered with exactly the expected state for every key.");
        } else {
            System.out.println(
                    "All backends produced exactly the expected state for every key; "
                            + String.join(", ", noFailure)
                            + " ended before a checkpoint completed, so no failure was injected"
                            + " there (try more --records).");
        }
        System.out.println(
                "Checkpoints and state files (DSTL files included) are left under "
                        + checkpointRoot
                        + "; delete it when done.");
        if (!allExact) {
            System.exit(1);
        }
    }

    /**
     * Records for a throughput run that processes for at least {@code runNanos} at the rate the
     * calibration run showed (with 20% margin), at least {@code records}, in steps of 100,000.
     */
    static long recordsPerRun(CountPerKeyRun calibration, long records, long runNanos) {
        double rate = calibration.processingRecordsPerSecond();
        long needed = (long) Math.ceil(rate * runNanos / 1e9 * 1.2);
        long rounded = (Math.max(records, needed) + 99_999) / 100_000 * 100_000;
        return Math.min(rounded, MAX_RUN_RECORDS);
    }

    private static Configuration config(BackendSpec backend, File checkpoints) {
        Configuration config = new Configuration();
        // first: a changelog backend puts its DSTL files next to the checkpoints
        config.setString("execution.checkpointing.dir", checkpoints.toURI().toString());
        backend.applyTo(config);
        config.setString("execution.checkpointing.interval", "200 ms");
        config.setString("restart-strategy.type", "fixed-delay");
        config.setString("restart-strategy.fixed-delay.attempts", "3");
        config.setString("restart-strategy.fixed-delay.delay", "100 ms");
        config.setString("pipeline.object-reuse", "true");
        return config;
    }
}
