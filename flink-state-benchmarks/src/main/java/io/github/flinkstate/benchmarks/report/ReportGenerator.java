package io.github.flinkstate.benchmarks.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Turns benchmark output into the committed results: reads JMH JSON files ({@code -rf json}) and
 * scenario JSON files ({@code Flip325Scenario --json}, {@code RescaleScenario --json}), writes them
 * in our common format ({@link ResultsJsonWriter}), draws one SVG chart per suite ({@link
 * SvgBarChart}, relative to RocksDB) and regenerates the results section of the Markdown document
 * ({@link MarkdownReport}; the rescale scenario's section by {@link RescaleMarkdown}, with
 * per-subtask times).
 *
 * <p>Usage: {@code ReportGenerator --jmh <file> [--jmh <file> ...] [--scenario <file> ...]
 * [--out-dir docs/results] [--name jmh-quick] [--markdown docs/benchmarks.md] [--title "..."]}.
 * Writes {@code <out-dir>/<name>-results.json} and {@code <out-dir>/<name>-<suite>.svg}. The
 * machine recorded is the one running the generator (with the JDK version from the JMH file), so
 * run it where the benchmarks ran.
 */
public final class ReportGenerator {

    private ReportGenerator() {}

    public static void main(String[] args) throws Exception {
        List<File> jmh = new ArrayList<>();
        List<File> scenarios = new ArrayList<>();
        File outDir = new File("docs/results");
        String name = "jmh-quick";
        File markdown = new File("docs/benchmarks.md");
        String title = "Results";
        for (int i = 0; i < args.length; i++) {
            String value = i + 1 < args.length ? args[i + 1] : null;
            switch (args[i]) {
                case "--jmh" -> jmh.add(new File(require(args[i], value)));
                case "--scenario" -> scenarios.add(new File(require(args[i], value)));
                case "--out-dir" -> outDir = new File(require(args[i], value));
                case "--name" -> name = require(args[i], value);
                case "--markdown" -> markdown = new File(require(args[i], value));
                case "--title" -> title = require(args[i], value);
                default ->
                        throw new IllegalArgumentException(
                                "Unknown argument "
                                        + args[i]
                                        + "; use --jmh, --scenario, --out-dir, --name, --markdown, --title");
            }
            i++;
        }
        if (jmh.isEmpty() && scenarios.isEmpty()) {
            throw new IllegalArgumentException(
                    "Nothing to report: give --jmh and/or --scenario files");
        }

        MachineInfo machine = MachineInfo.current();
        List<BenchResult> results = new ArrayList<>();
        List<String> sources = new ArrayList<>();
        for (File f : jmh) {
            results.addAll(JmhResultReader.read(f));
            machine = machine.withJava(JmhResultReader.jdkVersion(f));
            sources.add(f.getPath());
        }
        RescaleResults rescale = null;
        String rescaleSource = null;
        for (File f : scenarios) {
            results.addAll(ScenarioResultReader.read(f));
            sources.add(f.getPath());
            if (RescaleResults.isRescale(new ObjectMapper().readTree(f))) {
                rescale = RescaleResults.read(f);
                rescaleSource = f.getPath();
            }
        }
        outDir.mkdirs();
        File json = new File(outDir, name + "-results.json");
        ResultsJsonWriter.write(json, machine, sources, results);

        Map<String, List<BenchResult>> bySuite = new LinkedHashMap<>();
        for (BenchResult r : results) {
            bySuite.computeIfAbsent(r.suite(), s -> new ArrayList<>()).add(r);
        }
        Path docDir = markdown.getAbsoluteFile().getParentFile().toPath();
        List<String> sections = new ArrayList<>();
        for (Map.Entry<String, List<BenchResult>> e : bySuite.entrySet()) {
            ResultTable table = new ResultTable(e.getKey(), e.getValue());
            String chartLink = null;
            String rocks = table.baseline("rocksdb");
            if (rocks != null) {
                File svg = new File(outDir, name + "-" + slug(e.getKey()) + ".svg");
                SvgBarChart.write(table, rocks, e.getKey() + " (" + name + ")", svg.toPath());
                chartLink =
                        docDir.relativize(svg.getAbsoluteFile().toPath())
                                .toString()
                                .replace(File.separatorChar, '/');
                System.out.println("Chart written to " + svg.getPath());
            }
            sections.add(
                    rescale != null && e.getKey().equals(RescaleResults.SCENARIO)
                            ? RescaleMarkdown.render(rescale, rescaleSource, chartLink)
                            : MarkdownReport.render(table, chartLink));
        }
        String header =
                "## "
                        + title
                        + "\n\n"
                        + MarkdownReport.machineLine(machine)
                        + " Raw data: "
                        + String.join(", ", sources.stream().map(s -> "`" + s + "`").toList())
                        + "; common format: `"
                        + json.getPath()
                        + "`.";
        MarkdownReport.update(markdown.toPath(), MarkdownReport.section(header, sections));
        System.out.printf(
                Locale.ROOT,
                "%d results written to %s; %s updated%n",
                results.size(),
                json.getPath(),
                markdown.getPath());
    }

    private static String require(String flag, String value) {
        if (value == null) {
            throw new IllegalArgumentException(flag + " needs a value");
        }
        return value;
    }

    /** {@code ValueStateBenchmark} -> {@code value-state}, {@code flip325} -> {@code flip325}. */
    static String slug(String suite) {
        String s = suite.replaceAll("Benchmark$", "");
        return s.replaceAll("([a-z0-9])([A-Z])", "$1-$2")
                .toLowerCase(Locale.ROOT)
                .replaceAll("[^a-z0-9-]", "-");
    }
}
