package io.github.flinkstate.benchmarks.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.file.Files;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The disaggregated report: JMH ratios to RocksDB and ForSt (marked when the confidence intervals
 * overlap), rescale files of one size and claim mode merged into one table with speed-ups, charts
 * written, and only the marked section of the markdown replaced.
 */
class DisaggregatedReportTest {

    @TempDir File tmp;

    private static String jmhRun(String backend, double score, double error) {
        return "{\"jdkVersion\": \"17.0.99\", \"benchmark\":"
                + " \"io.github.flinkstate.benchmarks.jmh.ValueStateBenchmark.valueGet\", \"mode\":"
                + " \"thrpt\", \"params\": {\"backend\": \""
                + backend
                + "\", \"setupKeyCount\": \"100000\"}, \"primaryMetric\": {\"score\": "
                + score
                + ", \"scoreError\": "
                + error
                + ", \"scoreUnit\": \"ops/ms\"}}";
    }

    private static String rescaleFile(String claim, String... runs) {
        return "{\"scenario\": \"rescale\", \"machine\": {\"cores\": 2, \"java\": \"17\", \"os\":"
                + " \"Linux\", \"arch\": \"amd64\"}, \"stateBytes\": 268435456, \"valueBytes\": 256,"
                + " \"keys\": 1048576, \"repeats\": 1, \"claimMode\": \""
                + claim
                + "\", \"runs\": ["
                + String.join(", ", runs)
                + "]}";
    }

    private static String run(String backend, int from, int to, long max) {
        return "{\"backend\": \""
                + backend
                + "\", \"from\": "
                + from
                + ", \"to\": "
                + to
                + ", \"repeat\": 0, \"maxRestoreMs\": "
                + max
                + ", \"subtaskRestoreMs\": ["
                + max
                + "], \"restoredBytes\": -1, \"readAllMs\": 900}";
    }

    @Test
    void ratiosSpeedUpsChartsAndSectionReplacement() throws Exception {
        File jmh = new File(tmp, "jmh.json");
        Files.writeString(
                jmh.toPath(),
                "["
                        + String.join(
                                ", ",
                                jmhRun("ROCKSDB", 100, 5),
                                jmhRun("DISAGGREGATED", 250, 10),
                                jmhRun("FORST", 95, 10))
                        + "]");
        File a = new File(tmp, "a.json");
        File b = new File(tmp, "b.json");
        File c = new File(tmp, "c.json");
        Files.writeString(a.toPath(), rescaleFile("NO_CLAIM", run("rocksdb", 2, 1, 900)));
        Files.writeString(b.toPath(), rescaleFile("NO_CLAIM", run("disaggregated", 2, 1, 100)));
        Files.writeString(c.toPath(), rescaleFile("CLAIM", run("disaggregated", 2, 1, 50)));
        File out = new File(tmp, "results");

        String section =
                DisaggregatedReport.render(List.of(jmh), List.of(a, b, c), out, "results/");

        assertThat(section)
                .contains("| valueGet | 100 ± 5.00 | 250 ± 10.0 | 95.0 ± 10.0 | 2.50x | ~0.95x |")
                .contains("### Rescale, 256 MiB, NO_CLAIM")
                .contains("### Rescale, 256 MiB, CLAIM")
                .contains("| 2->1 | 900 (n=1) | 100 (n=1) | 9.00x |");
        assertThat(new File(out, "jmh-disagg-valuestatebenchmark.svg")).exists();
        assertThat(new File(out, "rescale-disagg-256mib-no-claim.svg")).exists();

        String doc = "# Title\n\ntext\n\n" + section + "\nafter\n";
        String replaced =
                DisaggregatedReport.replaceSection(
                        doc,
                        DisaggregatedReport.BEGIN + "\nnew\n" + DisaggregatedReport.END + "\n");
        assertThat(replaced)
                .isEqualTo(
                        "# Title\n\ntext\n\n"
                                + DisaggregatedReport.BEGIN
                                + "\nnew\n"
                                + DisaggregatedReport.END
                                + "\n\nafter\n");
    }
}
