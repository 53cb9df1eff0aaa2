package io.github.flinkstate.benchmarks.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The rescale scenario's results file ({@code scenario: "rescale"}, written by {@code
 * RescaleResultsJson}) read back: per backend and transition the median over repeats of the max
 * restore time per subtask, with the per-subtask times of that median run. Immutable.
 *
 * @param machine where it ran (from the file)
 * @param stateBytes keyed state written by the load job
 * @param valueBytes bytes per value
 * @param keys number of keys
 * @param entries one per backend and transition, in file order
 */
public record RescaleResults(
        MachineInfo machine, long stateBytes, int valueBytes, long keys, List<Entry> entries) {

    public static final String SCENARIO = "rescale";

    /** Unit of the scores; lower is better. */
    public static final String UNIT = "ms";

    /**
     * One backend and transition.
     *
     * @param maxRestoreMs median over the repeats of the max restore time per subtask
     * @param spreadMs half the max-min spread of that figure over the repeats, NaN for one run
     * @param subtaskRestoreMs per-subtask times of the median run
     * @param restoredBytes Flink's restored bytes of the median run (sum over subtasks), -1 if
     *     unknown
     * @param readAllMs the median run's time to read every key once after the restore, -1 if
     *     unknown
     * @param readComplete false if the median run's read was stopped at the scenario's deadline
     *     (then {@code readAllMs} is the time until it was stopped)
     * @param repeats how many restores were measured
     */
    public record Entry(
            String backend,
            String transition,
            long maxRestoreMs,
            double spreadMs,
            List<Long> subtaskRestoreMs,
            long restoredBytes,
            long readAllMs,
            boolean readComplete,
            int repeats) {}

    public RescaleResults {
        entries = List.copyOf(entries);
    }

    public static RescaleResults read(File file) throws IOException {
        return parse(new ObjectMapper().readTree(file));
    }

    public static boolean isRescale(JsonNode root) {
        return SCENARIO.equals(root.path("scenario").asText());
    }

    static RescaleResults parse(JsonNode root) {
        if (!isRescale(root)) {
            throw new IllegalArgumentException("Not a rescale scenario file");
        }
        Map<String, List<JsonNode>> runs = new LinkedHashMap<>();
        for (JsonNode run : root.path("runs")) {
            String key =
                    run.path("backend").asText()
                            + "\n"
                            + run.path("from").asInt()
                            + "->"
                            + run.path("to").asInt();
            runs.computeIfAbsent(key, k -> new ArrayList<>()).add(run);
        }
        List<Entry> entries = new ArrayList<>();
        for (Map.Entry<String, List<JsonNode>> e : runs.entrySet()) {
            List<JsonNode> rs = new ArrayList<>(e.getValue());
            rs.sort(
                    (a, b) ->
                            Long.compare(
                                    a.path("maxRestoreMs").asLong(),
                                    b.path("maxRestoreMs").asLong()));
            JsonNode median = rs.get(rs.size() / 2);
            List<Long> subtasks = new ArrayList<>();
            median.path("subtaskRestoreMs").forEach(n -> subtasks.add(n.asLong()));
            double spread =
                    rs.size() > 1
                            ? (rs.get(rs.size() - 1).path("maxRestoreMs").asLong()
                                            - rs.get(0).path("maxRestoreMs").asLong())
                                    / 2.0
                            : Double.NaN;
            String[] parts = e.getKey().split("\n");
            entries.add(
                    new Entry(
                            parts[0],
                            parts[1],
                            median.path("maxRestoreMs").asLong(),
                            spread,
                            subtasks,
                            median.path("restoredBytes").asLong(-1),
                            median.path("readAllMs").asLong(-1),
                            median.path("readComplete").asBoolean(true),
                            rs.size()));
        }
        JsonNode m = root.path("machine");
        return new RescaleResults(
                new MachineInfo(
                        m.path("cores").asInt(),
                        m.path("java").asText(),
                        m.path("os").asText(),
                        m.path("arch").asText()),
                root.path("stateBytes").asLong(),
                root.path("valueBytes").asInt(),
                root.path("keys").asLong(),
                entries);
    }

    /** Backends in file order. */
    public List<String> backends() {
        Set<String> out = new LinkedHashSet<>();
        entries.forEach(e -> out.add(e.backend()));
        return List.copyOf(out);
    }

    /** Transitions ({@code "2->1"}) in file order. */
    public List<String> transitions() {
        Set<String> out = new LinkedHashSet<>();
        entries.forEach(e -> out.add(e.transition()));
        return List.copyOf(out);
    }

    /** The entry of {@code backend} and {@code transition}, or null. */
    public Entry get(String backend, String transition) {
        for (Entry e : entries) {
            if (e.backend().equals(backend) && e.transition().equals(transition)) {
                return e;
            }
        }
        return null;
    }

    /**
     * One result per entry: suite {@code rescale}, benchmark = transition, score = max restore ms.
     */
    public List<BenchResult> toBenchResults() {
        Map<String, String> params = new LinkedHashMap<>();
        params.put("stateMiB", ResultTable.formatScore(stateBytes / 1048576.0));
        params.put("valueBytes", Integer.toString(valueBytes));
        List<BenchResult> out = new ArrayList<>();
        for (Entry e : entries) {
            out.add(
                    new BenchResult(
                            SCENARIO,
                            e.transition(),
                            e.backend(),
                            params,
                            e.maxRestoreMs(),
                            e.spreadMs(),
                            UNIT));
        }
        return out;
    }
}
