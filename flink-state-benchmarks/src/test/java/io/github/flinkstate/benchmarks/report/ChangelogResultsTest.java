package io.github.flinkstate.benchmarks.report;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A changelog scenario file becomes a time suite and a size suite, lower is better in both. */
class ChangelogResultsTest {

    @Test
    void splitsRunsIntoTimeAndSizeSuites() throws Exception {
        String json =
                "{\"scenario\": \"changelog\", \"workload\": \"value\", \"records\": 1000, \"parallelism\": 2,"
                        + " \"latencyMedianMs\": 5, \"materializeInterval\": \"10 s\", \"runs\": ["
                        + "{\"config\": \"rocksdb\", \"checkpointP50Ms\": 400.0, \"checkpointP99Ms\": 800.0, \"checkpointedBytes\": 1000,"
                        + " \"fullCheckpointBytes\": 900, \"dstlBytesWritten\": 0, \"restoreMs\": 200},"
                        + "{\"config\": \"dfs-batched\", \"checkpointP50Ms\": 200.0, \"checkpointP99Ms\": 900.0, \"checkpointedBytes\": 250,"
                        + " \"fullCheckpointBytes\": 800, \"dstlBytesWritten\": 300, \"restoreMs\": 400}]}";

        List<BenchResult> results = ScenarioResultReader.parse(new ObjectMapper().readTree(json));

        assertThat(results).hasSize(12);
        ResultTable time =
                new ResultTable(
                        "changelog-value-time",
                        results.stream()
                                .filter(r -> r.suite().equals("changelog-value-time"))
                                .toList());
        ResultTable size =
                new ResultTable(
                        "changelog-value-size",
                        results.stream()
                                .filter(r -> r.suite().equals("changelog-value-size"))
                                .toList());
        assertThat(time.unit()).isEqualTo("ms");
        assertThat(time.isTime()).isTrue();
        assertThat(size.unit()).isEqualTo("bytes");
        assertThat(size.lowerIsBetter()).isTrue();
        assertThat(size.isTime()).isFalse();
        assertThat(time.rowLabels()).containsExactly("checkpoint p50", "checkpoint p99", "restore");
        assertThat(time.ratio("checkpoint p50", "dfs-batched", "rocksdb")).isEqualTo(0.5);
        assertThat(size.ratio("checkpointed bytes", "dfs-batched", "rocksdb")).isEqualTo(0.25);
        assertThat(results.get(0).params())
                .containsEntry("dfsLatencyMedianMs", "5")
                .containsEntry("records", "1000");
        assertThat(SvgBarChart.render(size, "rocksdb", "t"))
                .contains("right of 1x = smaller")
                .contains("4.00x");
    }
}
