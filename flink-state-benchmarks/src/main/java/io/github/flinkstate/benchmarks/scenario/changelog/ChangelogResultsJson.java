package io.github.flinkstate.benchmarks.scenario.changelog;

import io.github.flinkstate.benchmarks.report.MachineInfo;
import java.io.File;
import java.io.FileWriter;
import java.io.IOException;
import java.util.List;
import java.util.Locale;

/**
 * Writes the changelog scenario's results as JSON ({@code "scenario": "changelog"}), the format the
 * report generator reads ({@code report/ChangelogResults}). Stateless.
 */
public final class ChangelogResultsJson {

    private ChangelogResultsJson() {}

    public static void write(
            File file,
            String workload,
            long records,
            int parallelism,
            long medianMs,
            long tailMs,
            double tailFraction,
            String materialize,
            List<ChangelogResult> results)
            throws IOException {
        file.getAbsoluteFile().getParentFile().mkdirs();
        StringBuilder sb = new StringBuilder();
        sb.append("{\n  \"scenario\": \"changelog\",\n  \"workload\": \"")
                .append(workload)
                .append("\",\n");
        sb.append("  \"machine\": ").append(MachineInfo.current().toJson()).append(",\n");
        sb.append(
                String.format(
                        Locale.ROOT,
                        "  \"records\": %d,\n  \"parallelism\": %d,\n  \"latencyMedianMs\": %d,\n  \"tailMs\": %d,\n  \"tailFraction\": %s,\n  \"materializeInterval\": \"%s\",\n  \"runs\": [\n",
                        records,
                        parallelism,
                        medianMs,
                        tailMs,
                        tailFraction,
                        materialize));
        for (int i = 0; i < results.size(); i++) {
            ChangelogResult r = results.get(i);
            sb.append(
                    String.format(
                            Locale.ROOT,
                            "    {\"config\": \"%s\", \"checkpointP50Ms\": %.1f, \"checkpointP99Ms\": %.1f, \"completedCheckpoints\": %d, \"failedCheckpoints\": %d, \"checkpointedBytes\": %d, \"fullCheckpointBytes\": %d, \"dstlFilesCreated\": %d, \"dstlBytesWritten\": %d, \"allFilesCreated\": %d, \"injectedTailDelays\": %d, \"loadRecordsPerSecond\": %.1f, \"restoreMs\": %d, \"restoreSubmitToRunningMs\": %d, \"restoreDstlOpens\": %d, \"restoreDstlReadBytes\": %d, \"materializedBytes\": %d, \"logHandles\": %d, \"logSegments\": %d, \"logFiles\": %d, \"logStoredBytes\": %d, \"logChanges\": %d, \"logChangeBytes\": %d, \"logMaxSubtaskChanges\": %d, \"logReadAloneMs\": %d}%s%n",
                            r.config(),
                            r.cpP50Ms(),
                            r.cpP99Ms(),
                            r.completedCheckpoints(),
                            r.failedCheckpoints(),
                            r.checkpointedBytes(),
                            r.fullSizeBytes(),
                            r.dstlFiles(),
                            r.dstlBytes(),
                            r.allFilesCreated(),
                            r.tailDelays(),
                            r.recordsPerSecond(),
                            r.restoreMs(),
                            r.submitToRunningMs(),
                            r.restoreDstlOpens(),
                            r.restoreDstlReadBytes(),
                            r.shape().materializedBytes(),
                            r.shape().logHandles(),
                            r.shape().logSegments(),
                            r.shape().logFiles(),
                            r.shape().logStoredBytes(),
                            r.shape().logChanges(),
                            r.shape().logChangeBytes(),
                            r.shape().maxSubtaskChanges(),
                            r.shape().readMs(),
                            i + 1 < results.size() ? "," : ""));
        }
        sb.append("  ]\n}\n");
        try (FileWriter w = new FileWriter(file)) {
            w.write(sb.toString());
        }
    }
}
