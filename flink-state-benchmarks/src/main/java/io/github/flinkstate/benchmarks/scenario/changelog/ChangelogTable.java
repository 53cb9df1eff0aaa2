package io.github.flinkstate.benchmarks.scenario.changelog;

import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/** Prints the changelog scenario's results as ratios to the {@code filesystem} DSTL. Stateless. */
public final class ChangelogTable {

    private ChangelogTable() {}

    public static void print(String workload, List<ChangelogResult> results) {
        ChangelogResult base =
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
        for (ChangelogResult r : results) {
            System.out.printf(
                    Locale.ROOT,
                    "%-12s %18s %18s %20s %20s %16s %20s %16s %20s%n",
                    r.config(),
                    cell(r, base, ChangelogResult::cpP50Ms, "%.0f ms"),
                    cell(r, base, ChangelogResult::cpP99Ms, "%.0f ms"),
                    cell(r, base, x -> x.checkpointedBytes() / 1048576.0, "%.1f MiB"),
                    cell(r, base, x -> x.fullSizeBytes() / 1048576.0, "%.1f MiB"),
                    cell(r, base, x -> (double) x.dstlFiles(), "%.0f"),
                    cell(r, base, x -> x.dstlBytes() / 1048576.0, "%.1f MiB"),
                    cell(r, base, x -> (double) x.restoreMs(), "%.0f ms"),
                    cell(r, base, ChangelogResult::recordsPerSecond, "%.0f"));
        }
    }

    private static String cell(
            ChangelogResult r,
            ChangelogResult base,
            Function<ChangelogResult, Double> f,
            String rawFormat) {
        double v = f.apply(r);
        double b = f.apply(base);
        String ratio = b == 0 ? "-" : String.format(Locale.ROOT, "%.2fx", v / b);
        return ratio + " (" + String.format(Locale.ROOT, rawFormat, v) + ")";
    }
}
