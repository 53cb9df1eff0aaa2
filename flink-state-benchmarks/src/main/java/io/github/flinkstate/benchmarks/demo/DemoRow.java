package io.github.flinkstate.benchmarks.demo;

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
        List<JobStats> timed,
        List<ResultCheck> timedChecks) {

    private static final String FORMAT = "%-26s %12s %9s %5s %10s %9s %5s %9s %9s %12s %s%n";

    DemoRow {
        timed = List.copyOf(timed);
        timedChecks = List.copyOf(timedChecks);
    }

    /** Every run of this backend produced exactly the expected state. */
    boolean exact() {
        return recoveryCheck.isExact() && timedChecks.stream().allMatch(ResultCheck::isExact);
    }

    double medianRate() {
        double[] r = timed.stream().mapToDouble(JobStats::recordsPerSecond).sorted().toArray();
        return r.length == 0 ? 0 : r[r.length / 2];
    }

    /** (max - min) / median of the throughput runs, in percent. */
    double spreadPercent() {
        double[] r = timed.stream().mapToDouble(JobStats::recordsPerSecond).sorted().toArray();
        double median = medianRate();
        return r.length < 2 || median == 0 ? 0 : 100 * (r[r.length - 1] - r[0]) / median;
    }

    private double cacheHitRatio() {
        return timed.isEmpty() ? Double.NaN : timed.get(timed.size() - 1).cacheHitRatio();
    }

    String progressLine() {
        return String.format(
                Locale.ROOT,
                "%-26s done: %d throughput runs, %,.0f records/s median; recovery run %s",
                backend,
                timed.size(),
                medianRate(),
                exact() ? "exact" : recoveryCheck.toString());
    }

    String verdict() {
        if (!recoveryCheck.isExact()) {
            return recoveryCheck.verdict();
        }
        for (ResultCheck c : timedChecks) {
            if (!c.isExact()) {
                return "throughput run " + c.verdict();
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
                        "runs",
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
                            r.timed.size(),
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

    static String legend(long records, int minRuns) {
        return String.format(
                Locale.ROOT,
                """
                What the figures are good for:
                - records/s, spread, runs, cache hit: failure-free runs of the FLIP-325 count-per-key
                  job (%,d records each, at least %d runs per backend, median shown; spread is
                  (max - min) / median). Compare backends with each other on this machine: a gap
                  smaller than the spread is noise. They are not production throughput: one JVM,
                  an embedded MiniCluster, checkpoints every 200 ms to a local disk. For
                  benchmark-grade figures see docs/benchmarks.md (JMH, several forks).
                - restarts .. state bytes, exact after recovery: one run per backend with value,
                  list, map, reducing and aggregating state and a timer per key, one injected
                  failure after a completed checkpoint and a restart from it. "yes" means every
                  state of every key is exactly what the input implies (nothing lost, nothing
                  applied twice); cp avg/max are end-to-end checkpoint durations of that run.
                """,
                records,
                minRuns);
    }
}
