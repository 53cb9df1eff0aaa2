package io.github.flinkstate.benchmarks.report;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** JMH and scenario JSON in, common-format JSON, SVG charts and the Markdown section out. */
class ReportGeneratorTest {

    @TempDir Path tmp;

    private static String jmhRun(String method, String backend, double score, String error) {
        return "{\"jdkVersion\": \"17.0.99\", \"benchmark\": \"io.github.flinkstate.benchmarks.jmh.ValueStateBenchmark."
                + method
                + "\", \"mode\": \"thrpt\", \"params\": {\"backend\": \""
                + backend
                + "\", \"setupKeyCount\": \"500000\"},"
                + " \"primaryMetric\": {\"score\": "
                + score
                + ", \"scoreError\": "
                + error
                + ", \"scoreUnit\": \"ops/ms\"}}";
    }

    @Test
    void writesResultsChartsAndMarkdownTables() throws Exception {
        Path jmh = tmp.resolve("raw.json");
        Files.writeString(
                jmh,
                "["
                        + String.join(
                                ",",
                                jmhRun("valueGet", "ROCKSDB", 500, "10"),
                                jmhRun("valueGet", "HASHMAP", 5000, "\"NaN\""),
                                jmhRun("valueGet", "LRU_100", 4000, "100"))
                        + "]");
        Path scenario = tmp.resolve("flip325.json");
        Files.writeString(
                scenario,
                "{\"scenario\": \"flip325\", \"machine\": {\"cores\": 2, \"java\": \"17\", \"os\": \"Linux\"},"
                        + " \"records\": 1000, \"runs\": [{\"backend\": \"rocksdb\", \"recordsPerSecond\": 100.0},"
                        + " {\"backend\": \"rocksdb\", \"recordsPerSecond\": 300.0}, {\"backend\": \"hashmap\", \"recordsPerSecond\": 1000.0}]}");
        Path doc = tmp.resolve("benchmarks.md");
        Files.writeString(
                doc,
                "# Benchmarks\n\nHand-written intro.\n\n"
                        + MarkdownReport.BEGIN
                        + "\nold\n"
                        + MarkdownReport.END
                        + "\n\nHand-written end.\n");
        File out = tmp.resolve("results").toFile();

        ReportGenerator.main(
                new String[] {
                    "--jmh",
                    jmh.toString(),
                    "--scenario",
                    scenario.toString(),
                    "--out-dir",
                    out.toString(),
                    "--name",
                    "jmh-test",
                    "--markdown",
                    doc.toString()
                });

        JsonNode json = new ObjectMapper().readTree(new File(out, "jmh-test-results.json"));
        assertThat(json.path("format").asText()).isEqualTo(ResultsJsonWriter.FORMAT);
        assertThat(json.path("machine").path("java").asText()).isEqualTo("17.0.99");
        assertThat(json.path("machine").path("cores").asInt()).isPositive();
        assertThat(json.path("results")).hasSize(5);
        JsonNode first = json.path("results").get(0);
        assertThat(first.path("benchmark").asText()).isEqualTo("valueGet");
        assertThat(first.path("backend").asText()).isEqualTo("ROCKSDB");
        assertThat(first.path("params").path("setupKeyCount").asText()).isEqualTo("500000");
        assertThat(first.path("unit").asText()).isEqualTo("ops/ms");
        assertThat(json.path("results").get(1).path("error").isNull()).isTrue();

        String svg =
                Files.readString(
                        new File(out, "jmh-test-value-state.svg").toPath(), StandardCharsets.UTF_8);
        assertThat(svg).startsWith("<svg").contains("10.0x").contains("8.00x");
        assertThat(new File(out, "jmh-test-flip325.svg")).exists();

        String md = Files.readString(doc, StandardCharsets.UTF_8);
        assertThat(md)
                .startsWith("# Benchmarks\n\nHand-written intro.")
                .endsWith("Hand-written end.\n")
                .doesNotContain("\nold\n");
        assertThat(md).contains("| valueGet | 10.0x | 1.00x | 8.00x |");
        assertThat(md).contains("| LRU_100 | 4,000 | ± 100 | 8.00x | 0.80x |");
        assertThat(md).contains("| hashmap | 1,000 | n/a | 5.00x | 1.00x |");
        assertThat(md).contains("| rocksdb | 200 | ± 100 | 1.00x | 0.20x |");
    }

    private static String rescaleRun(String backend, int from, int to, long max, String subtasks) {
        return "{\"backend\": \""
                + backend
                + "\", \"from\": "
                + from
                + ", \"to\": "
                + to
                + ", \"repeat\": 0,"
                + " \"maxRestoreMs\": "
                + max
                + ", \"subtaskRestoreMs\": ["
                + subtasks
                + "], \"restoredBytes\": 2097152,"
                + " \"readAllMs\": 700}";
    }

    @Test
    void rescaleScenario_rendersMatrixWithRatiosAndSpeedUpChart() throws Exception {
        Path scenario = tmp.resolve("rescale.json");
        Files.writeString(
                scenario,
                "{\"scenario\": \"rescale\", \"machine\": {\"cores\": 2, \"java\": \"17\", \"os\": \"Linux\"},"
                        + " \"stateBytes\": 67108864, \"valueBytes\": 256, \"keys\": 262144, \"restoreTime\": \"INITIALIZING to RUNNING\","
                        + " \"runs\": ["
                        + String.join(
                                ",",
                                rescaleRun("rocksdb", 2, 1, 4000, "4000"),
                                rescaleRun("rocksdb", 2, 1, 6000, "6000"),
                                rescaleRun("rocksdb", 2, 1, 2000, "2000"),
                                rescaleRun("rocksdb-ingest", 2, 1, 500, "500"),
                                rescaleRun("hashmap", 2, 1, 2000, "2000"),
                                rescaleRun("rocksdb", 1, 2, 300, "300, 250"),
                                rescaleRun("rocksdb-ingest", 1, 2, 300, "280, 300"),
                                rescaleRun("hashmap", 1, 2, 900, "900, 850"))
                        + "]}");
        Path doc = tmp.resolve("benchmarks.md");
        File out = tmp.resolve("results").toFile();

        ReportGenerator.main(
                new String[] {
                    "--scenario",
                    scenario.toString(),
                    "--out-dir",
                    out.toString(),
                    "--name",
                    "test",
                    "--markdown",
                    doc.toString()
                });

        String md = Files.readString(doc, StandardCharsets.UTF_8);
        assertThat(md).contains("### rescale").contains("![rescale](results/test-rescale.svg)");
        assertThat(md)
                .contains("| p1->p2 | rocksdb | rocksdb-ingest | hashmap | ingest speed-up |");
        assertThat(md).contains("| 2->1 | 4,000 (1.00x) | 500 (0.13x) | 2,000 (0.50x) | 8.00x |");
        assertThat(md).contains("| 1->2 | 300 (1.00x) | 300 (1.00x) | 900 (3.00x) | 1.00x |");
        assertThat(md).contains("| 1->2 | hashmap | 900 | 900, 850 | 2.00 | 700 |");
        assertThat(md).contains("| 2->1 | rocksdb | 4,000 ± 2,000 | 4000 | 2.00 | 700 |");
        String svg =
                Files.readString(
                        new File(out, "test-rescale.svg").toPath(), StandardCharsets.UTF_8);
        assertThat(svg)
                .contains("speed-up relative to rocksdb")
                .contains(">8.00x<")
                .contains(">0.33x<");
        JsonNode json = new ObjectMapper().readTree(new File(out, "test-results.json"));
        assertThat(json.path("results")).hasSize(6);
        assertThat(json.path("results").get(0).path("score").asDouble()).isEqualTo(4000);
        assertThat(json.path("results").get(0).path("error").asDouble()).isEqualTo(2000);
        assertThat(json.path("results").get(0).path("unit").asText()).isEqualTo("ms");
        assertThat(json.path("results").get(0).path("benchmark").asText()).isEqualTo("2->1");
    }

    @Test
    void slugsNameChartFiles() {
        assertThat(ReportGenerator.slug("ValueStateBenchmark")).isEqualTo("value-state");
        assertThat(ReportGenerator.slug("EngineBenchmark")).isEqualTo("engine");
        assertThat(ReportGenerator.slug("flip325")).isEqualTo("flip325");
    }
}
