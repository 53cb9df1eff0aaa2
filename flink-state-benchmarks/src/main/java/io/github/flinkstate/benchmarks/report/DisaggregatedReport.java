package io.github.flinkstate.benchmarks.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.github.flinkstate.benchmarks.common.Args;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The disaggregated backend's measured figures beside RocksDB's, IngestDB's and ForSt's: reads the
 * raw JMH files of the state benchmarks and the rescale scenario's JSON files, writes one SVG chart
 * per JMH suite and per rescale file, and replaces the text between {@link #BEGIN} and {@link #END}
 * of a markdown file with tables of ratios:
 *
 * <ul>
 *   <li>JMH: per operation the throughput of every backend (ops/ms, with JMH's 99.9% confidence
 *       half-width), and DISAGGREGATED and FORST as ratios to ROCKSDB, plus DISAGGREGATED to FORST;
 *       a ratio is marked {@code ~} when the two confidence intervals overlap;
 *   <li>rescale: per transition the median max restore time per subtask of every backend (ms, with
 *       half the max-min spread over the repeats), and the disaggregated backend's speed-up against
 *       {@code rocksdb}, {@code rocksdb-ingest} and {@code forst} (their time / its time).
 * </ul>
 *
 * <p>Usage: {@code java -cp flink-state-benchmarks/target/benchmarks.jar
 * io.github.flinkstate.benchmarks.report.DisaggregatedReport --jmh a.json,b.json --rescale
 * c.json,d.json --out-dir docs/results --markdown docs/disaggregated.md}. Stateless.
 */
public final class DisaggregatedReport {

    public static final String BEGIN = "<!-- BEGIN MEASURED (DisaggregatedReport) -->";
    public static final String END = "<!-- END MEASURED -->";

    static final String OURS_JMH = "DISAGGREGATED";
    static final String FORST_JMH = "FORST";
    static final String ROCKS_JMH = "ROCKSDB";
    static final String OURS = "disaggregated";

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private DisaggregatedReport() {}

    public static void main(String[] argv) throws IOException {
        Args args =
                Args.of("DisaggregatedReport")
                        .flag("jmh", "", "comma-separated raw JMH JSON files (state benchmarks)")
                        .flag("rescale", "", "comma-separated rescale scenario JSON files")
                        .flag("out-dir", "docs/results", "where the SVG charts go")
                        .flag("markdown", "docs/disaggregated.md", "file whose section is replaced")
                        .parseOrExit(argv);
        File outDir = new File(args.get("out-dir"));
        File markdown = new File(args.get("markdown"));
        String section =
                render(
                        files(args.get("jmh")),
                        files(args.get("rescale")),
                        outDir,
                        relativeDir(markdown, outDir));
        String text =
                markdown.exists()
                        ? Files.readString(markdown.toPath(), StandardCharsets.UTF_8)
                        : "";
        Files.writeString(markdown.toPath(), replaceSection(text, section), StandardCharsets.UTF_8);
        System.out.println("Wrote " + markdown + " and charts in " + outDir);
    }

    /**
     * The section (markers included) for the given files; writes the charts into {@code outDir}.
     */
    static String render(List<File> jmh, List<File> rescale, File outDir, String chartPrefix)
            throws IOException {
        outDir.mkdirs();
        StringBuilder md = new StringBuilder(BEGIN).append("\n\n");
        if (!jmh.isEmpty()) {
            renderJmh(jmh, outDir, chartPrefix, md);
        }
        for (Map.Entry<String, List<File>> group : groupRescaleFiles(rescale).entrySet()) {
            renderRescale(group.getValue(), outDir, chartPrefix, md);
        }
        return md.append(END).append('\n').toString();
    }

    private static void renderJmh(List<File> files, File outDir, String prefix, StringBuilder md)
            throws IOException {
        Map<String, List<BenchResult>> bySuite = new LinkedHashMap<>();
        for (File f : files) {
            for (BenchResult r : JmhResultReader.read(f)) {
                bySuite.computeIfAbsent(r.suite(), s -> new ArrayList<>()).add(r);
            }
        }
        md.append("### JMH state benchmarks\n\n")
                .append("Raw data: ")
                .append(String.join(", ", files.stream().map(f -> "`" + f + "`").toList()))
                .append(
                        ". Throughput in ops/ms ± JMH's 99.9% confidence half-width over all"
                                + " measurement iterations of all forks; ratios to ROCKSDB (and"
                                + " DISAGGREGATED to FORST), marked `~` where the two confidence"
                                + " intervals overlap (no difference shown).\n\n");
        for (Map.Entry<String, List<BenchResult>> e : bySuite.entrySet()) {
            ResultTable table = new ResultTable(e.getKey(), e.getValue());
            md.append("#### ").append(e.getKey());
            if (!table.fixedParams().isEmpty()) {
                md.append(" (").append(params(table.fixedParams())).append(')');
            }
            md.append("\n\n| operation |");
            for (String b : table.backends()) {
                md.append(' ').append(b).append(" |");
            }
            md.append(" DISAGG / ROCKSDB | FORST / ROCKSDB | DISAGG / FORST |\n|---|");
            md.append("---:|".repeat(table.backends().size() + 3)).append('\n');
            for (String row : table.rowLabels()) {
                md.append("| ").append(row).append(" |");
                for (String b : table.backends()) {
                    BenchResult r = table.get(row, b);
                    md.append(' ').append(r == null ? "-" : withError(r)).append(" |");
                }
                md.append(' ')
                        .append(ratioCell(table, row, OURS_JMH, ROCKS_JMH))
                        .append(" | ")
                        .append(ratioCell(table, row, FORST_JMH, ROCKS_JMH))
                        .append(" | ")
                        .append(ratioCell(table, row, OURS_JMH, FORST_JMH))
                        .append(" |\n");
            }
            String chart = "jmh-disagg-" + slug(e.getKey()) + ".svg";
            SvgBarChart.write(
                    table,
                    table.baseline(ROCKS_JMH),
                    e.getKey() + ": throughput relative to ROCKSDB (right = faster)",
                    new File(outDir, chart).toPath());
            md.append("\n![").append(e.getKey()).append("](").append(prefix).append(chart);
            md.append(")\n\n");
        }
    }

    /**
     * Rescale files grouped by state size and claim mode (one table each), in order of first
     * appearance: a matrix may be run in several parts, e.g. one backend per run.
     */
    static Map<String, List<File>> groupRescaleFiles(List<File> files) throws IOException {
        Map<String, List<File>> groups = new LinkedHashMap<>();
        for (File f : files) {
            JsonNode root = MAPPER.readTree(f);
            String key = root.path("stateBytes").asLong() + "/" + claimMode(root);
            groups.computeIfAbsent(key, k -> new ArrayList<>()).add(f);
        }
        return groups;
    }

    private static String claimMode(JsonNode root) {
        return root.path("claimMode").asText("NO_CLAIM");
    }

    /** The files' runs as one rescale file (the first file's header). */
    static JsonNode merge(List<File> files) throws IOException {
        ObjectNode merged = null;
        for (File f : files) {
            JsonNode root = MAPPER.readTree(f);
            if (merged == null) {
                merged = (ObjectNode) root.deepCopy();
            } else {
                ArrayNode runs = (ArrayNode) merged.path("runs");
                root.path("runs").forEach(runs::add);
            }
        }
        return merged;
    }

    private static void renderRescale(
            List<File> files, File outDir, String prefix, StringBuilder md) throws IOException {
        JsonNode root = merge(files);
        RescaleResults results = RescaleResults.parse(root);
        String claim = claimMode(root);
        String file = String.join("`, `", files.stream().map(File::toString).toList());
        String title =
                String.format(
                        Locale.ROOT,
                        "Rescale, %s MiB, %s",
                        ResultTable.formatScore(results.stateBytes() / 1048576.0),
                        claim);
        md.append("### ").append(title).append("\n\n");
        md.append(
                String.format(
                        Locale.ROOT,
                        "Raw data: `%s` (%,d keys x %d bytes). Max restore time per subtask in ms"
                                + " (INITIALIZING to RUNNING), median over the repeats ± half the"
                                + " max-min spread (n = restores); speed-up = the other backend's"
                                + " time / the disaggregated backend's time. `read all` = the"
                                + " verify job's one read of every key after the restore, ms, of"
                                + " the median run (`stopped at` = the read hit the scenario's"
                                + " deadline; every key it read was right).%n%n",
                        file,
                        results.keys(),
                        results.valueBytes()));
        List<String> backends = results.backends();
        md.append("| p1->p2 |");
        for (String b : backends) {
            md.append(' ').append(b).append(" |");
        }
        List<String> baselines = new ArrayList<>();
        for (String b : List.of("rocksdb", "rocksdb-ingest", "forst")) {
            if (backends.contains(b) && backends.contains(OURS)) {
                baselines.add(b);
                md.append(" speed-up vs ").append(b).append(" |");
            }
        }
        md.append(" read all (");
        md.append(String.join(" / ", backends)).append(") |\n|---|");
        md.append("---:|".repeat(backends.size() + baselines.size() + 1)).append('\n');
        for (String t : results.transitions()) {
            md.append("| ").append(t).append(" |");
            for (String b : backends) {
                RescaleResults.Entry e = results.get(b, t);
                md.append(' ');
                if (e == null) {
                    md.append('-');
                } else {
                    md.append(e.maxRestoreMs());
                    if (!Double.isNaN(e.spreadMs())) {
                        md.append(" ± ").append(ResultTable.formatScore(e.spreadMs()));
                    }
                    md.append(" (n=").append(e.repeats()).append(')');
                }
                md.append(" |");
            }
            RescaleResults.Entry ours = results.get(OURS, t);
            for (String b : baselines) {
                RescaleResults.Entry other = results.get(b, t);
                md.append(' ');
                md.append(
                        ours == null || other == null || ours.maxRestoreMs() == 0
                                ? "-"
                                : ResultTable.formatRatio(
                                        other.maxRestoreMs() / (double) ours.maxRestoreMs()));
                md.append(" |");
            }
            List<String> reads = new ArrayList<>();
            for (String b : backends) {
                RescaleResults.Entry e = results.get(b, t);
                reads.add(
                        e == null || e.readAllMs() < 0
                                ? "-"
                                : (e.readComplete() ? "" : "stopped at ")
                                        + String.format(Locale.ROOT, "%,d", e.readAllMs()));
            }
            md.append(' ').append(String.join(" / ", reads)).append(" |\n");
        }
        ResultTable table = new ResultTable(RescaleResults.SCENARIO, results.toBenchResults());
        if (table.baseline("rocksdb") == null) {
            md.append('\n');
            return;
        }
        String chart =
                "rescale-disagg-"
                        + slug(ResultTable.formatScore(results.stateBytes() / 1048576.0) + "mib")
                        + "-"
                        + slug(claim)
                        + ".svg";
        SvgBarChart.write(
                table,
                table.baseline("rocksdb"),
                title + ": restore speed-up relative to rocksdb (right = faster)",
                new File(outDir, chart).toPath());
        md.append("\n![").append(title).append("](").append(prefix).append(chart).append(")\n\n");
    }

    /** {@code score ± error}, the error omitted when JMH could not compute it. */
    static String withError(BenchResult r) {
        String s = ResultTable.formatScore(r.score());
        return Double.isNaN(r.error()) ? s : s + " ± " + ResultTable.formatScore(r.error());
    }

    /**
     * {@code a / b} as a ratio, prefixed with {@code ~} when the 99.9% confidence intervals of the
     * two scores overlap.
     */
    static String ratioCell(ResultTable table, String row, String a, String b) {
        String ca = table.baseline(a);
        String cb = table.baseline(b);
        if (ca == null || cb == null) {
            return "-";
        }
        BenchResult ra = table.get(row, ca);
        BenchResult rb = table.get(row, cb);
        if (ra == null || rb == null || rb.score() == 0) {
            return "-";
        }
        String ratio = ResultTable.formatRatio(ra.score() / rb.score());
        double ea = Double.isNaN(ra.error()) ? 0 : ra.error();
        double eb = Double.isNaN(rb.error()) ? 0 : rb.error();
        boolean overlap = ra.score() - ea <= rb.score() + eb && rb.score() - eb <= ra.score() + ea;
        return overlap ? "~" + ratio : ratio;
    }

    /** Replaces the marked section of {@code text}, or appends it when there is none. */
    static String replaceSection(String text, String section) {
        int begin = text.indexOf(BEGIN);
        int end = text.indexOf(END);
        if (begin < 0 || end < begin) {
            return text + (text.endsWith("\n") || text.isEmpty() ? "" : "\n") + "\n" + section;
        }
        int after = end + END.length();
        if (after < text.length() && text.charAt(after) == '\n') {
            after++;
        }
        return text.substring(0, begin) + section + text.substring(after);
    }

    private static String params(Map<String, String> params) {
        List<String> out = new ArrayList<>();
        params.forEach((k, v) -> out.add(k + "=" + v));
        return String.join(", ", out);
    }

    private static List<File> files(String list) {
        List<File> out = new ArrayList<>();
        for (String s : list.split(",")) {
            if (!s.isBlank()) {
                out.add(new File(s.trim()));
            }
        }
        return out;
    }

    private static String relativeDir(File markdown, File outDir) {
        File parent = markdown.getAbsoluteFile().getParentFile();
        String rel = parent.toPath().relativize(outDir.getAbsoluteFile().toPath()).toString();
        return rel.isEmpty() ? "" : rel.replace(File.separatorChar, '/') + "/";
    }

    private static String slug(String s) {
        return s.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-").replaceAll("(^-|-$)", "");
    }
}
