package io.github.flinkstate.benchmarks.report;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Writes a {@link ResultTable} as an SVG chart: for every row, one horizontal bar per backend
 * showing its score relative to the baseline on a log scale, growing right of the "1x" line when
 * faster and left when slower. For time units ({@link ResultTable#lowerIsBetter()}) the bar is the
 * speed-up, baseline time / time, so right still means faster; for sizes ({@code bytes}) it is the
 * reduction, baseline size / size, so right means smaller. Plain SVG 1.1, no scripts, no external
 * fonts. Stateless.
 */
public final class SvgBarChart {

    private static final String[] COLORS = {
        "#4e79a7", "#e15759", "#f28e2b", "#76b7b2", "#59a14f", "#edc948", "#b07aa1"
    };
    private static final int WIDTH = 960;
    private static final int LABEL_WIDTH = 230;
    private static final int RIGHT_MARGIN = 70;
    private static final int BAR = 11;
    private static final int GROUP_GAP = 10;
    private static final int TOP = 70;

    private SvgBarChart() {}

    /** Writes the chart of {@code table} relative to {@code baseline} to {@code file}. */
    public static void write(ResultTable table, String baseline, String title, Path file)
            throws IOException {
        Files.writeString(file, render(table, baseline, title), StandardCharsets.UTF_8);
    }

    static String render(ResultTable table, String baseline, String title) {
        List<String> backends = table.backends();
        List<String> rows = table.rowLabels();
        boolean inverted = table.lowerIsBetter();
        double lo = 1;
        double hi = 1;
        for (String row : rows) {
            for (String b : backends) {
                double r = shown(table, row, b, baseline);
                if (r > 0 && !Double.isInfinite(r)) {
                    lo = Math.min(lo, r);
                    hi = Math.max(hi, r);
                }
            }
        }
        double logLo = Math.floor(Math.log10(lo) * 2) / 2 - 0.05;
        double logHi = Math.ceil(Math.log10(hi) * 2) / 2 + 0.05;
        int plotLeft = LABEL_WIDTH;
        int plotWidth = WIDTH - LABEL_WIDTH - RIGHT_MARGIN;
        int groupHeight = backends.size() * BAR + GROUP_GAP;
        int height = TOP + rows.size() * groupHeight + 40;

        StringBuilder svg = new StringBuilder();
        svg.append(
                String.format(
                        Locale.ROOT,
                        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">%n",
                        WIDTH,
                        height,
                        WIDTH,
                        height));
        svg.append(
                String.format(
                        Locale.ROOT,
                        "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n",
                        WIDTH,
                        height));
        svg.append(
                String.format(
                        Locale.ROOT,
                        "<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">%s</text>%n",
                        escape(title)));
        String subtitle =
                !inverted
                        ? "score relative to " + baseline + " (log scale; right of 1x = faster)"
                        : table.isTime()
                                ? "speed-up relative to "
                                        + baseline
                                        + " ("
                                        + baseline
                                        + " time / time; log scale; right of 1x = faster)"
                                : "reduction relative to "
                                        + baseline
                                        + " ("
                                        + baseline
                                        + " size / size; log scale; right of 1x = smaller)";
        svg.append(
                String.format(
                        Locale.ROOT,
                        "<text x=\"10\" y=\"38\" fill=\"#555\">%s</text>%n",
                        escape(subtitle)));
        int lx = 10;
        for (int i = 0; i < backends.size(); i++) {
            svg.append(
                    String.format(
                            Locale.ROOT,
                            "<rect x=\"%d\" y=\"48\" width=\"10\" height=\"10\" fill=\"%s\"/>",
                            lx,
                            COLORS[i % COLORS.length]));
            svg.append(
                    String.format(
                            Locale.ROOT,
                            "<text x=\"%d\" y=\"57\">%s</text>%n",
                            lx + 14,
                            escape(backends.get(i))));
            lx += 24 + 7 * backends.get(i).length();
        }
        int plotBottom = TOP + rows.size() * groupHeight;
        for (double tick : ticks(logLo, logHi)) {
            double x = plotLeft + (Math.log10(tick) - logLo) / (logHi - logLo) * plotWidth;
            boolean one = tick == 1;
            svg.append(
                    String.format(
                            Locale.ROOT,
                            "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" stroke-width=\"%s\"/>%n",
                            x,
                            TOP - 4,
                            x,
                            plotBottom,
                            one ? "#333" : "#ddd",
                            one ? "1.5" : "1"));
            svg.append(
                    String.format(
                            Locale.ROOT,
                            "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">%s</text>%n",
                            x,
                            plotBottom + 14,
                            tickLabel(tick)));
        }
        double xOne = plotLeft + (0 - logLo) / (logHi - logLo) * plotWidth;
        for (int r = 0; r < rows.size(); r++) {
            int y0 = TOP + r * groupHeight;
            svg.append(
                    String.format(
                            Locale.ROOT,
                            "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>%n",
                            plotLeft - 8,
                            y0 + backends.size() * BAR / 2 + 4,
                            escape(rows.get(r))));
            for (int i = 0; i < backends.size(); i++) {
                double ratio = shown(table, rows.get(r), backends.get(i), baseline);
                if (!(ratio > 0) || Double.isInfinite(ratio)) {
                    continue;
                }
                double x = plotLeft + (Math.log10(ratio) - logLo) / (logHi - logLo) * plotWidth;
                double left = Math.min(x, xOne);
                double w = Math.max(1, Math.abs(x - xOne));
                int y = y0 + i * BAR;
                svg.append(
                        String.format(
                                Locale.ROOT,
                                "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>%s %s: %s</title></rect>%n",
                                left,
                                y,
                                w,
                                BAR - 2,
                                COLORS[i % COLORS.length],
                                escape(rows.get(r)),
                                escape(backends.get(i)),
                                ResultTable.formatRatio(ratio)));
                svg.append(
                        String.format(
                                Locale.ROOT,
                                "<text x=\"%.1f\" y=\"%d\" font-size=\"9\" fill=\"#333\">%s</text>%n",
                                Math.max(x, xOne) + 3,
                                y + BAR - 3,
                                ResultTable.formatRatio(ratio)));
            }
        }
        svg.append("</svg>\n");
        return svg.toString();
    }

    /** The bar's value: score / baseline score, or its inverse (the speed-up) for time units. */
    private static double shown(ResultTable table, String row, String backend, String baseline) {
        double ratio = table.ratio(row, backend, baseline);
        return table.lowerIsBetter() ? 1 / ratio : ratio;
    }

    /** 1-2-5 ticks inside [10^logLo, 10^logHi]. */
    private static List<Double> ticks(double logLo, double logHi) {
        List<Double> ticks = new java.util.ArrayList<>();
        for (int e = (int) Math.floor(logLo) - 1; e <= (int) Math.ceil(logHi); e++) {
            for (double m : new double[] {1, 2, 5}) {
                double t = m * Math.pow(10, e);
                double lt = Math.log10(t);
                if (lt >= logLo && lt <= logHi) {
                    ticks.add(t);
                }
            }
        }
        return ticks;
    }

    private static String tickLabel(double t) {
        return t >= 1
                ? String.format(Locale.ROOT, "%.0fx", t)
                : String.format(Locale.ROOT, "%sx", Double.toString(t).replaceAll("0+$", ""));
    }

    private static String escape(String s) {
        return s.replace("&", "&amp;")
                .replace("<", "&lt;")
                .replace(">", "&gt;")
                .replace("\"", "&quot;");
    }
}
