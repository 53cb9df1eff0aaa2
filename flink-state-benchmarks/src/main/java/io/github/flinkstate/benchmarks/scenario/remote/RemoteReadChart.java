package io.github.flinkstate.benchmarks.scenario.remote;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Writes the throughput over time after the restore as an SVG line chart: one line per backend
 * configuration (the per-bucket median over the rounds), x = seconds from the restore's start, y =
 * gets per second on a log scale. Colour by backend, dash pattern by cache budget. Plain SVG 1.1.
 * Stateless.
 */
public final class RemoteReadChart {

    private static final int WIDTH = 960;
    private static final int HEIGHT = 460;
    private static final int LEFT = 80;
    private static final int RIGHT = 230;
    private static final int TOP = 50;
    private static final int BOTTOM = 50;

    private RemoteReadChart() {}

    /** Writes the chart of the runs of {@code keys} in {@code results} to {@code file}. */
    public static void write(List<RemoteReadResult> results, String keys, String title, Path file)
            throws IOException {
        Map<String, List<RemoteReadResult>> lines = new LinkedHashMap<>();
        for (RemoteReadResult r : results) {
            if (r.keys().equals(keys)) {
                lines.computeIfAbsent(r.label(), x -> new ArrayList<>()).add(r);
            }
        }
        Files.writeString(file, render(lines, title), StandardCharsets.UTF_8);
    }

    static String render(Map<String, List<RemoteReadResult>> lines, String title) {
        Map<String, double[]> series = new LinkedHashMap<>();
        double max = 1;
        int buckets = 0;
        int bucketMillis = 1000;
        for (Map.Entry<String, List<RemoteReadResult>> e : lines.entrySet()) {
            List<RemoteReadResult> runs = e.getValue();
            int n = runs.get(0).bucketGets().size();
            bucketMillis = runs.get(0).bucketMillis();
            double[] median = new double[n];
            for (int i = 0; i < n; i++) {
                double[] v = new double[runs.size()];
                for (int r = 0; r < runs.size(); r++) {
                    v[r] =
                            runs.get(r)
                                    .opsPerSecond(Math.min(i, runs.get(r).bucketGets().size() - 1));
                }
                median[i] = RemoteReadTable.median(v);
                max = Math.max(max, median[i]);
            }
            buckets = Math.max(buckets, n);
            series.put(e.getKey(), median);
        }
        double logLo = 2; // 100 gets/s
        double logHi = Math.ceil(Math.log10(max));
        double seconds = buckets * bucketMillis / 1000.0;
        int plotW = WIDTH - LEFT - RIGHT;
        int plotH = HEIGHT - TOP - BOTTOM;
        StringBuilder svg = new StringBuilder();
        svg.append(
                String.format(
                        Locale.ROOT,
                        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\""
                                + " font-family=\"sans-serif\" font-size=\"12\">\n",
                        WIDTH,
                        HEIGHT));
        svg.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        svg.append(
                String.format(
                        Locale.ROOT,
                        "<text x=\"%d\" y=\"25\" font-size=\"15\">%s</text>\n",
                        LEFT,
                        escape(title)));
        for (double d = logLo; d <= logHi + 1e-9; d++) {
            double y = TOP + plotH - (d - logLo) / (logHi - logLo) * plotH;
            svg.append(
                    String.format(
                            Locale.ROOT,
                            "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                                    + "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%,.0f</text>\n",
                            LEFT,
                            y,
                            LEFT + plotW,
                            y,
                            LEFT - 6,
                            y + 4,
                            Math.pow(10, d)));
        }
        int step = seconds > 30 ? 10 : 5;
        for (int s = 0; s <= seconds; s += step) {
            double x = LEFT + s / seconds * plotW;
            svg.append(
                    String.format(
                            Locale.ROOT,
                            "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#eee\"/>"
                                    + "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d s</text>\n",
                            x,
                            TOP,
                            x,
                            TOP + plotH,
                            x,
                            TOP + plotH + 18,
                            s));
        }
        svg.append(
                String.format(
                        Locale.ROOT,
                        "<text x=\"%d\" y=\"%d\">gets/s (log) against seconds since the restore"
                                + " started; median of the rounds per %d ms</text>\n",
                        LEFT,
                        HEIGHT - 10,
                        bucketMillis));
        int legend = 0;
        for (Map.Entry<String, double[]> e : series.entrySet()) {
            String label = e.getKey();
            String color =
                    label.startsWith("disaggregated")
                            ? label.contains("(no hint)") ? "#a0cbe8" : "#4e79a7"
                            : label.startsWith("forst") ? "#e15759" : "#59a14f";
            String dash =
                    label.contains(" 10%")
                            ? "2,3"
                            : label.contains(" 50%") ? "7,4" : label.contains(" 0%") ? "1,6" : "";
            StringBuilder points = new StringBuilder();
            double[] v = e.getValue();
            for (int i = 0; i < v.length; i++) {
                double x = LEFT + (i + 0.5) * bucketMillis / 1000.0 / seconds * plotW;
                double lv = Math.max(logLo, Math.log10(Math.max(1, v[i])));
                double y = TOP + plotH - (lv - logLo) / (logHi - logLo) * plotH;
                points.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
            }
            svg.append(
                    String.format(
                            Locale.ROOT,
                            "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s"
                                    + " points=\"%s\"/>\n",
                            color,
                            dash.isEmpty() ? "" : " stroke-dasharray=\"" + dash + "\"",
                            points.toString().trim()));
            double ly = TOP + 10 + legend++ * 20;
            svg.append(
                    String.format(
                            Locale.ROOT,
                            "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\""
                                    + " stroke-width=\"2\"%s/><text x=\"%d\" y=\"%.1f\">%s</text>\n",
                            LEFT + plotW + 15,
                            ly,
                            LEFT + plotW + 45,
                            ly,
                            color,
                            dash.isEmpty() ? "" : " stroke-dasharray=\"" + dash + "\"",
                            LEFT + plotW + 52,
                            ly + 4,
                            escape(label)));
        }
        svg.append("</svg>\n");
        return svg.toString();
    }

    private static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
