package io.github.flinkstate.benchmarks.demo;

import io.github.flinkstate.benchmarks.common.CountPerKeyRun;
import io.github.flinkstate.benchmarks.common.JobStats;
import io.github.flinkstate.testing.job.ResultCheck;
import java.util.List;
import java.util.Locale;

/**
 * One backend's line of the demo's table: the recovery run and the throughput runs, and how the
 * table and its legend are printed. Immutable.
 */
record DemoRow(
        String backend,
        JobStats recovery,
        ResultCheck recoveryCheck,
        boolean failureInjected,
        CountPerKeyRun calibration,
        List<CountPerKeyRun> timed) {

    private static final String FORMAT = "%-30s %12s %7s %14s %10s %9s %5s %9s %9s %12s %s%n";

    DemoRow {
        timed = List.copyOf(timed);
    }

    /** Every run of this backend produced exactly the expected state. */
    boolean exact() {
        return recoveryCheck.isExact()
                && calibration.check().isExact()
                && timed.stream().allMatch(r -> r.check().isExact());
    }

    double medianRate() {
        double[] r =
                timed.stream()
                        .mapToDouble(CountPerKeyRun::processingRecordsPerSecond)
                        .sorted()
                        .toArray();
        return r.length == 0 ? 0 : r[r.length / 2];
    }

    /** (max - min) / median of the throughput runs, in percent. */
    double spreadPercent() {
        double[] r =
                timed.stream()
                        .mapToDouble(CountPerKeyRun::processingRecordsPerSecond)
                        .sorted()
                        .toArray();
        double median = medianRate();
        return r.length < 2 || median == 0 ? 0 : 100 * (r[r.length - 1] - r[0]) / median;
    }

    private double cacheHitRatio() {
        return timed.isEmpty() ? Double.NaN : timed.get(timed.size() - 1).stats().cacheHitRatio();
    }

    String progressLine() {
        return String.format(
                Locale.ROOT,
                "%-30s done: %d throughput runs, %,.0f records/s median; recovery run %s",
                backend,
                timed.size(),
                medianRate(),
                exact() ? "exact" : verdict());
    }

    String verdict() {
        if (!recoveryCheck.isExact()) {
            return recoveryCheck.verdict();
        }
        if (!calibration.check().isExact()) {
            return "calibration run " + calibration.check().verdict();
        }
        for (CountPerKeyRun r : timed) {
            if (!r.check().isExact()) {
                return "throughput run " + r.check().verdict();
            }
        }
        return failureInjected
                ? "yes"
                : "yes (no failure injected: the job ended before a checkpoint completed)";
    }

    static String table(List<DemoRow> rows) {
        StringBuilder sb = new StringBuilder();
        sb.append(
                String.format(
                        Locale.ROOT,
                        FORMAT,
                        "backend",
                        "records/s",
                        "spread",
                        "records/run",
                        "cache hit",
                        "restarts",
                        "cps",
                        "cp avg ms",
                        "cp max ms",
                        "state bytes",
                        "exact after recovery"));
        for (DemoRow r : rows) {
            double hit = r.cacheHitRatio();
            sb.append(
                    String.format(
                            Locale.ROOT,
                            FORMAT,
                            r.backend,
                            String.format(Locale.ROOT, "%,.0f", r.medianRate()),
                            String.format(Locale.ROOT, "%.0f%%", r.spreadPercent()),
                            String.format(
                                    Locale.ROOT,
                                    "%d x %,d",
                                    r.timed.size(),
                                    r.timed.isEmpty() ? 0 : r.timed.get(0).stats().records()),
                            Double.isNaN(hit)
                                    ? "-"
                                    : String.format(Locale.ROOT, "%.1f%%", 100 * hit),
                            r.recovery.restarts(),
                            r.recovery.completedCheckpoints(),
                            r.recovery.checkpointAvgMillis(),
                            r.recovery.checkpointMaxMillis(),
                            String.format(
                                    Locale.ROOT, "%,d", r.recovery.latestCheckpointFullSize()),
                            r.verdict()));
        }
        return sb.toString();
    }

    static String legend(int runs) {
        return String.format(
                Locale.ROOT,
                """
                What the figures are good for:
                - records/s, spread, records/run: %d failure-free runs per backend of
                  the FLIP-325 count-per-key job on one warm cluster, each long enough to process
                  for at least --run-seconds (a fast backend gets more records per run). records/s
                  is the median over the runs of records / processing time (first record to last
                  end-of-input timer: checkpoints included, job deployment and shutdown not);
                  spread is (max - min) / median. Compare backends with each other on this
                  machine: a gap smaller than the spread is noise. Not production throughput: one
                  JVM, an embedded MiniCluster, checkpoints every 200 ms to a local disk. For
                  benchmark-grade figures see docs/benchmarks.md (JMH, several forks). cache
                  hit: the share of reads the LRU cache answered in the last of these runs.
                - restarts .. state bytes, exact after recovery: one run per backend with value,
                  list, map, reducing and aggregating state and a timer per key, one injected
                  failure after a completed checkpoint and a restart from it. "yes" means every
                  state of every key is exactly what the input implies (nothing lost, nothing
                  applied twice), in this run and in every throughput run; cps is the number of
                  completed checkpoints of the recovery run, cp avg/max their end-to-end
                  durations, and state bytes the full size of its last completed checkpoint.
                """,
                runs);
    }
}
