package io.github.flinkstate.benchmarks.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the JSON that JMH writes with {@code -rf json}: an array with one object per benchmark and
 * parameter combination ({@code benchmark}, {@code params}, {@code primaryMetric.score}, {@code
 * scoreError}, {@code scoreUnit}). The parameter {@code backend} or {@code engine} becomes {@link
 * BenchResult#backend()}. Stateless.
 */
public final class JmhResultReader {

    /** Parameters that name the thing being compared. */
    private static final List<String> BACKEND_PARAMS = List.of("backend", "engine");

    private JmhResultReader() {}

    public static List<BenchResult> read(File file) throws IOException {
        return parse(new ObjectMapper().readTree(file));
    }

    /** The JDK version JMH recorded in {@code file}, or null. */
    public static String jdkVersion(File file) throws IOException {
        JsonNode root = new ObjectMapper().readTree(file);
        return root.isArray() && root.size() > 0
                ? root.get(0).path("jdkVersion").asText(null)
                : null;
    }

    static List<BenchResult> parse(JsonNode root) {
        if (!root.isArray()) {
            throw new IllegalArgumentException("Not JMH JSON output (expected an array)");
        }
        List<BenchResult> results = new ArrayList<>();
        for (JsonNode run : root) {
            String full = run.path("benchmark").asText();
            int dot = full.lastIndexOf('.');
            String method = full.substring(dot + 1);
            String clazz = full.substring(full.lastIndexOf('.', dot - 1) + 1, dot);
            Map<String, String> params = new LinkedHashMap<>();
            String backend = "-";
            for (Iterator<Map.Entry<String, JsonNode>> it = run.path("params").fields();
                    it.hasNext(); ) {
                Map.Entry<String, JsonNode> p = it.next();
                if (BACKEND_PARAMS.contains(p.getKey())) {
                    backend = p.getValue().asText();
                } else {
                    params.put(p.getKey(), p.getValue().asText());
                }
            }
            JsonNode metric = run.path("primaryMetric");
            results.add(
                    new BenchResult(
                            clazz,
                            method,
                            backend,
                            params,
                            number(metric.path("score")),
                            number(metric.path("scoreError")),
                            metric.path("scoreUnit").asText()));
        }
        return results;
    }

    /** JMH writes "NaN" as a string when the error cannot be computed. */
    private static double number(JsonNode node) {
        if (node.isNumber()) {
            return node.asDouble();
        }
        try {
            return Double.parseDouble(node.asText());
        } catch (NumberFormatException e) {
            return Double.NaN;
        }
    }
}
