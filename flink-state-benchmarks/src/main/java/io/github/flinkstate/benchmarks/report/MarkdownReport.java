package io.github.flinkstate.benchmarks.report;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Renders result tables as Markdown and puts them into a document between the markers {@link
 * #BEGIN} and {@link #END}, leaving the hand-written text around them untouched (the markers and
 * the section are appended when missing). Stateless.
 */
public final class MarkdownReport {

    public static final String BEGIN = "<!-- BEGIN GENERATED RESULTS (ReportGenerator) -->";
    public static final String END = "<!-- END GENERATED RESULTS -->";

    private MarkdownReport() {}

    /** One suite: its chart, a matrix of ratios to RocksDB, and one table per benchmark. */
    static String render(ResultTable table, String chartLink) {
        StringBuilder md = new StringBuilder();
        String rocks = table.baseline("rocksdb");
        String heap = table.baseline("hashmap");
        md.append("### ").append(table.suite()).append("\n\n");
        md.append("Unit: ").append(table.unit());
        if (!table.fixedParams().isEmpty()) {
            md.append("; parameters: ");
            int i = 0;
            for (Map.Entry<String, String> p : table.fixedParams().entrySet()) {
                md.append(i++ > 0 ? ", " : "")
                        .append('`')
                        .append(p.getKey())
                        .append('=')
                        .append(p.getValue())
                        .append('`');
            }
        }
        md.append(".\n\n");
        if (chartLink != null) {
            md.append("![").append(table.suite()).append("](").append(chartLink).append(")\n\n");
        }
        List<String> backends = table.backends();
        if (rocks != null) {
            md.append("Score relative to ")
                    .append(rocks)
                    .append(table.lowerIsBetter() ? " (lower is better):" : ":")
                    .append("\n\n| benchmark |");
            backends.forEach(b -> md.append(' ').append(b).append(" |"));
            md.append("\n|---|");
            backends.forEach(b -> md.append("---:|"));
            md.append('\n');
            for (String row : table.rowLabels()) {
                md.append("| ").append(row).append(" |");
                for (String b : backends) {
                    md.append(' ')
                            .append(ResultTable.formatRatio(table.ratio(row, b, rocks)))
                            .append(" |");
                }
                md.append('\n');
            }
            md.append('\n');
        }
        for (String row : table.rowLabels()) {
            md.append("**").append(row).append("**\n\n| backend | score | error (99.9%) |");
            if (rocks != null) {
                md.append(" x ").append(rocks).append(" |");
            }
            if (heap != null) {
                md.append(" x ").append(heap).append(" |");
            }
            md.append("\n|---|---:|---:|")
                    .append(rocks != null ? "---:|" : "")
                    .append(heap != null ? "---:|" : "")
                    .append('\n');
            for (String b : backends) {
                BenchResult r = table.get(row, b);
                if (r == null) {
                    continue;
                }
                md.append("| ")
                        .append(b)
                        .append(" | ")
                        .append(ResultTable.formatScore(r.score()))
                        .append(" | ")
                        .append(
                                Double.isNaN(r.error())
                                        ? "n/a"
                                        : "± " + ResultTable.formatScore(r.error()))
                        .append(" |");
                if (rocks != null) {
                    md.append(' ')
                            .append(ResultTable.formatRatio(table.ratio(row, b, rocks)))
                            .append(" |");
                }
                if (heap != null) {
                    md.append(' ')
                            .append(ResultTable.formatRatio(table.ratio(row, b, heap)))
                            .append(" |");
                }
                md.append('\n');
            }
            md.append('\n');
        }
        return md.toString();
    }

    /** The generated section: a header line and every suite. */
    static String section(String header, List<String> suites) {
        StringBuilder md = new StringBuilder(BEGIN).append("\n\n").append(header).append("\n\n");
        suites.forEach(md::append);
        return md.append(END).append('\n').toString();
    }

    /** Replaces the generated section of {@code doc} (creating the file or section if needed). */
    static void update(Path doc, String section) throws IOException {
        String text =
                Files.exists(doc)
                        ? Files.readString(doc, StandardCharsets.UTF_8)
                        : "# Benchmarks\n\n";
        int begin = text.indexOf(BEGIN);
        int end = text.indexOf(END);
        String updated;
        if (begin >= 0 && end > begin) {
            int after = end + END.length();
            if (after < text.length() && text.charAt(after) == '\n') {
                after++;
            }
            updated = text.substring(0, begin) + section + text.substring(after);
        } else {
            updated = text + (text.endsWith("\n") ? "\n" : "\n\n") + section;
        }
        Files.writeString(doc, updated, StandardCharsets.UTF_8);
    }

    static String machineLine(MachineInfo m) {
        return String.format(
                Locale.ROOT,
                "Machine: %d cores, Java %s, %s (%s).",
                m.cores(),
                m.java(),
                m.os(),
                m.arch());
    }
}
