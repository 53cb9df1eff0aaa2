package io.github.flinkstate.benchmarks.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.io.IOException;
import java.util.List;

/**
 * Writes our one results format:
 *
 * <pre>{@code
 * {"format": "flinkstate-benchmark-results", "version": 1,
 *  "machine": {"cores": 2, "java": "17.0.15", "os": "Linux 6.8", "arch": "amd64"},
 *  "sources": ["docs/results/jmh-quick-raw.json", ...],
 *  "results": [{"suite": "ValueStateBenchmark", "benchmark": "valueGet", "backend": "ROCKSDB",
 *               "params": {"setupKeyCount": "500000"}, "score": 812.3, "error": 25.1, "unit": "ops/ms"}, ...]}
 * }</pre>
 *
 * {@code error} is null when it could not be computed. Stateless.
 */
public final class ResultsJsonWriter {

    public static final String FORMAT = "flinkstate-benchmark-results";
    public static final int VERSION = 1;

    private ResultsJsonWriter() {}

    public static void write(
            File file, MachineInfo machine, List<String> sources, List<BenchResult> results)
            throws IOException {
        ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
        ObjectNode root = mapper.createObjectNode();
        root.put("format", FORMAT);
        root.put("version", VERSION);
        machine.writeTo(root.putObject("machine"));
        ArrayNode src = root.putArray("sources");
        sources.forEach(src::add);
        ArrayNode out = root.putArray("results");
        for (BenchResult r : results) {
            ObjectNode n = out.addObject();
            n.put("suite", r.suite());
            n.put("benchmark", r.benchmark());
            n.put("backend", r.backend());
            ObjectNode p = n.putObject("params");
            r.params().forEach(p::put);
            n.put("score", r.score());
            if (Double.isNaN(r.error())) {
                n.putNull("error");
            } else {
                n.put("error", r.error());
            }
            n.put("unit", r.unit());
        }
        mapper.writeValue(file, root);
    }
}
