package io.github.flinkstate.benchmarks.report;

import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * Renders the rescale scenario's section of the generated results: the chart, a matrix of max
 * restore times per transition and backend with ratios to RocksDB's default restore mode and the
 * speed-up of IngestDB mode over it, and the per-subtask times. Stateless.
 */
final class RescaleMarkdown {

    static final String ROCKSDB = "rocksdb";
    static final String INGEST = "rocksdb-ingest";

    private RescaleMarkdown() {}

    static String render(RescaleResults r, String source, String chartLink) {
        List<String> backends = r.backends();
        boolean hasRocks = backends.contains(ROCKSDB);
        boolean hasIngest = hasRocks && backends.contains(INGEST);
        int repeats = r.entries().stream().mapToInt(RescaleResults.Entry::repeats).max().orElse(1);
        StringBuilder md = new StringBuilder("### rescale\n\n");
        md.append(
                String.format(
                        Locale.ROOT,
                        "Restore after rescaling p1->p2 (`RescaleScenario`): %s MiB of keyed state (%,d keys x %d bytes), "
                                + "max parallelism 128, restored from one retained checkpoint taken at p1; every key "
                                + "verified after the restore. Figure: the longest restore of any subtask, in ms "
                                + "(lower is better)%s; a subtask's restore time is the time from its INITIALIZING to its "
                                + "RUNNING timestamp in Flink's execution graph. Raw data: `%s`.%n%n",
                        ResultTable.formatScore(r.stateBytes() / 1048576.0),
                        r.keys(),
                        r.valueBytes(),
                        repeats > 1
                                ? ", median of " + repeats + " restores of the same checkpoint"
                                : "",
                        source));
        if (chartLink != null) {
            md.append("![rescale](").append(chartLink).append(")\n\n");
        }
        md.append("| p1->p2 |");
        backends.forEach(b -> md.append(' ').append(b).append(" |"));
        if (hasIngest) {
            md.append(" ingest speed-up |");
        }
        md.append("\n|---|");
        backends.forEach(b -> md.append("---:|"));
        md.append(hasIngest ? "---:|\n" : "\n");
        for (String t : r.transitions()) {
            RescaleResults.Entry rocks = r.get(ROCKSDB, t);
            md.append("| ").append(t).append(" |");
            for (String b : backends) {
                RescaleResults.Entry e = r.get(b, t);
                md.append(' ').append(e == null ? "-" : cell(e, rocks)).append(" |");
            }
            if (hasIngest) {
                RescaleResults.Entry ingest = r.get(INGEST, t);
                md.append(' ')
                        .append(
                                rocks == null || ingest == null || ingest.maxRestoreMs() == 0
                                        ? "-"
                                        : ResultTable.formatRatio(
                                                (double) rocks.maxRestoreMs()
                                                        / ingest.maxRestoreMs()))
                        .append(" |");
            }
            md.append('\n');
        }
        md.append('\n');
        if (hasRocks) {
            md.append(
                    "Cells: max restore ms (time relative to `rocksdb`, Flink's default restore mode; below 1x = faster).");
        }
        if (hasIngest) {
            md.append(" Ingest speed-up: `rocksdb` time / `rocksdb-ingest` time.");
        }
        md.append(
                "\n\nPer subtask (ms, subtask 0 first; of the median run), the bytes Flink reports as restored (summed"
                        + " over subtasks; a subtask counts every state handle it opens in full, so splits count shared files"
                        + " more than once), and the time the verify job then took to read every key once (not part of the"
                        + " restore):\n\n");
        md.append(
                "| p1->p2 | backend | max ms | per subtask ms | restored MiB | read all keys ms |\n"
                        + "|---|---|---:|---|---:|---:|\n");
        for (String t : r.transitions()) {
            for (String b : backends) {
                RescaleResults.Entry e = r.get(b, t);
                if (e == null) {
                    continue;
                }
                md.append(
                        String.format(
                                Locale.ROOT,
                                "| %s | %s | %,d%s | %s | %s | %s |%n",
                                t,
                                b,
                                e.maxRestoreMs(),
                                Double.isNaN(e.spreadMs())
                                        ? ""
                                        : " ± " + ResultTable.formatScore(e.spreadMs()),
                                e.subtaskRestoreMs().stream()
                                        .map(String::valueOf)
                                        .collect(Collectors.joining(", ")),
                                e.restoredBytes() < 0
                                        ? "n/a"
                                        : ResultTable.formatScore(e.restoredBytes() / 1048576.0),
                                e.readAllMs() < 0
                                        ? "n/a"
                                        : String.format(Locale.ROOT, "%,d", e.readAllMs())));
            }
        }
        return md.append('\n').toString();
    }

    private static String cell(RescaleResults.Entry e, RescaleResults.Entry rocks) {
        String ms = String.format(Locale.ROOT, "%,d", e.maxRestoreMs());
        if (rocks == null || rocks.maxRestoreMs() == 0) {
            return ms;
        }
        return ms
                + " ("
                + ResultTable.formatRatio((double) e.maxRestoreMs() / rocks.maxRestoreMs())
                + ")";
    }
}
