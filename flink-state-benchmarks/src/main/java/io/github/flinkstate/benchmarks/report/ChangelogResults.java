package io.github.flinkstate.benchmarks.report;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns a changelog scenario file ({@code scenario: "changelog"}, written by {@code
 * ChangelogScenario}) into results of our common format. One run per config ({@code rocksdb} =
 * changelog off, {@code filesystem} = Flink's DSTL, {@code dfs-batched} = ours) becomes two suites,
 * since a suite has one unit: {@code changelog-<workload>-time} (checkpoint duration p50 and p99,
 * restore time; ms) and {@code changelog-<workload>-size} (bytes referenced by checkpoints, size of
 * the last full checkpoint, bytes written to the DSTL; bytes). Lower is better in both. One run per
 * config, so no error. Stateless.
 */
final class ChangelogResults {

    static final String SCENARIO = "changelog";

    /** Metric field in the file, and the benchmark name it gets in the report. */
    private record Metric(String field, String name, String unit) {}

    private static final List<Metric> METRICS =
            List.of(
                    new Metric("checkpointP50Ms", "checkpoint p50", "ms"),
                    new Metric("checkpointP99Ms", "checkpoint p99", "ms"),
                    new Metric("restoreMs", "restore", "ms"),
                    new Metric("checkpointedBytes", "checkpointed bytes", "bytes"),
                    new Metric("fullCheckpointBytes", "full checkpoint size", "bytes"),
                    new Metric("dstlBytesWritten", "DSTL bytes written", "bytes"));

    private ChangelogResults() {}

    static boolean isChangelog(JsonNode root) {
        return SCENARIO.equals(root.path("scenario").asText());
    }

    static List<BenchResult> parse(JsonNode root) {
        String workload = root.path("workload").asText("unknown");
        Map<String, String> params = new LinkedHashMap<>();
        params.put("records", root.path("records").asText());
        params.put("parallelism", root.path("parallelism").asText());
        params.put("dfsLatencyMedianMs", root.path("latencyMedianMs").asText());
        params.put("materialize", root.path("materializeInterval").asText());
        List<BenchResult> out = new ArrayList<>();
        for (JsonNode run : root.path("runs")) {
            String config = run.path("config").asText();
            for (Metric m : METRICS) {
                if (run.has(m.field())) {
                    String suite =
                            SCENARIO + "-" + workload + (m.unit().equals("ms") ? "-time" : "-size");
                    out.add(
                            new BenchResult(
                                    suite,
                                    m.name(),
                                    config,
                                    params,
                                    run.path(m.field()).asDouble(),
                                    Double.NaN,
                                    m.unit()));
                }
            }
        }
        return out;
    }
}
