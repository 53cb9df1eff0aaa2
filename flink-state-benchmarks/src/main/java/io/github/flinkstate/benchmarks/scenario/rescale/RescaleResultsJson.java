package io.github.flinkstate.benchmarks.scenario.rescale;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.github.flinkstate.benchmarks.report.MachineInfo;
import java.io.File;
import java.io.IOException;
import java.util.List;
import org.apache.flink.core.execution.RecoveryClaimMode;

/**
 * Writes the rescale scenario's raw results, the file {@code report.RescaleResults} reads:
 *
 * <pre>{@code
 * {"scenario": "rescale",
 *  "machine": {"cores": 2, "java": "17.0.15", "os": "Linux 6.8", "arch": "amd64"},
 *  "stateBytes": 67108864, "valueBytes": 256, "keys": 262144, "maxParallelism": 128, "repeats": 1,
 *  "claimMode": "NO_CLAIM",
 *  "restoreTime": "<how subtaskRestoreMs is measured>",
 *  "runs": [{"backend": "rocksdb", "from": 2, "to": 1, "repeat": 0,
 *            "maxRestoreMs": 812, "subtaskRestoreMs": [812], "probesPerSubtask": [262144],
 *            "keysVerified": 262144, "readAllMs": 1480, "readComplete": true, "checkpointId": 1, "checkpointFullBytes": 70254411,
 *            "checkpointedBytes": 70254411, "restoredBytes": 70254411,
 *            "flinkJobInitialization": {"maxRestoreStateDurationMs": 640, ...}}, ...]}
 * }</pre>
 *
 * {@code restoredBytes} is -1 when Flink did not report it. Stateless.
 */
public final class RescaleResultsJson {

    public static final String SCENARIO = "rescale";
    public static final String RESTORE_TIME =
            "per subtask of the keyed operator: its RUNNING minus its INITIALIZING timestamp in Flink's execution graph";

    private RescaleResultsJson() {}

    public static void write(
            File file,
            MachineInfo machine,
            long stateBytes,
            int valueBytes,
            long keys,
            int repeats,
            RecoveryClaimMode claimMode,
            List<RescaleRun> runs)
            throws IOException {
        ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
        ObjectNode root = mapper.createObjectNode();
        root.put("scenario", SCENARIO);
        machine.writeTo(root.putObject("machine"));
        root.put("stateBytes", stateBytes);
        root.put("valueBytes", valueBytes);
        root.put("keys", keys);
        root.put("maxParallelism", RescaleJobs.MAX_PARALLELISM);
        root.put("repeats", repeats);
        root.put("claimMode", claimMode.name());
        root.put("restoreTime", RESTORE_TIME);
        ArrayNode out = root.putArray("runs");
        for (RescaleRun run : runs) {
            RestoreMeasurement r = run.measurement();
            ObjectNode n = out.addObject();
            n.put("backend", run.backend());
            n.put("from", run.transition().from());
            n.put("to", run.transition().to());
            n.put("repeat", run.repeat());
            n.put("maxRestoreMs", r.maxRestoreMs());
            r.subtaskRestoreMs().forEach(n.putArray("subtaskRestoreMs")::add);
            r.probesPerSubtask().forEach(n.putArray("probesPerSubtask")::add);
            n.put("keysVerified", r.keysVerified());
            n.put("readAllMs", r.readAllMs());
            n.put("readComplete", r.readComplete());
            n.put("checkpointId", run.checkpoint().checkpointId());
            n.put("checkpointFullBytes", run.checkpoint().fullBytes());
            n.put("checkpointedBytes", run.checkpoint().checkpointedBytes());
            n.put("restoredBytes", r.restoredBytes());
            ObjectNode span = n.putObject("flinkJobInitialization");
            r.flinkSpan().entrySet().stream()
                    .sorted(java.util.Map.Entry.comparingByKey())
                    .forEach(e -> span.put(e.getKey(), e.getValue()));
        }
        file.getAbsoluteFile().getParentFile().mkdirs();
        mapper.writeValue(file, root);
    }
}
