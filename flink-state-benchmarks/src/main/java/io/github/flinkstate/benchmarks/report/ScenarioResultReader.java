package io.github.flinkstate.benchmarks.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads a scenario result file as {@code Flip325Scenario} writes it ({@code scenario}, {@code
 * machine}, {@code records}, {@code runs[]} with {@code backend} and {@code recordsPerSecond}) and
 * turns it into one {@link BenchResult} per backend: the median records/s over the repeats, with
 * half the min-max spread as error (NaN for one run). The scenario's backend names ({@code
 * rocksdb}, {@code hashmap}, {@code lru(250)+rocksdb}) are kept. A rescale scenario file ({@code
 * scenario: "rescale"}) becomes one result per backend and transition ({@link
 * RescaleResults#toBenchResults()}); a changelog scenario file ({@code scenario: "changelog"}) one
 * result per config and metric ({@link ChangelogResults}). Stateless.
 */
public final class ScenarioResultReader {

    private ScenarioResultReader() {}

    public static List<BenchResult> read(File file) throws IOException {
        return parse(new ObjectMapper().readTree(file));
    }

    /** The machine the scenario file records, or null. */
    public static MachineInfo machine(File file) throws IOException {
        JsonNode m = new ObjectMapper().readTree(file).path("machine");
        return m.isMissingNode()
                ? null
                : new MachineInfo(
                        m.path("cores").asInt(),
                        m.path("java").asText(),
                        m.path("os").asText(),
                        "");
    }

    static List<BenchResult> parse(JsonNode root) {
        if (RescaleResults.isRescale(root)) {
            return RescaleResults.parse(root).toBenchResults();
        }
        if (ChangelogResults.isChangelog(root)) {
            return ChangelogResults.parse(root);
        }
        String scenario = root.path("scenario").asText("scenario");
        Map<String, List<Double>> rates = new LinkedHashMap<>();
        for (JsonNode run : root.path("runs")) {
            rates.computeIfAbsent(run.path("backend").asText(), b -> new ArrayList<>())
                    .add(run.path("recordsPerSecond").asDouble());
        }
        Map<String, String> params = new LinkedHashMap<>();
        if (root.has("records")) {
            params.put("records", root.path("records").asText());
        }
        List<BenchResult> results = new ArrayList<>();
        for (Map.Entry<String, List<Double>> e : rates.entrySet()) {
            List<Double> r = e.getValue();
            r.sort(Double::compare);
            double median =
                    r.size() % 2 == 1
                            ? r.get(r.size() / 2)
                            : (r.get(r.size() / 2 - 1) + r.get(r.size() / 2)) / 2;
            double error = r.size() > 1 ? (r.get(r.size() - 1) - r.get(0)) / 2 : Double.NaN;
            results.add(
                    new BenchResult(
                            scenario,
                            "throughput",
                            e.getKey(),
                            params,
                            median,
                            error,
                            "records/s"));
        }
        return results;
    }
}
