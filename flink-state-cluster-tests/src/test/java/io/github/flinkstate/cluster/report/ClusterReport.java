package io.github.flinkstate.cluster.report;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The cluster test report: one table row and one details section per scenario, rewritten to {@code
 * target/cluster-report.md} after every scenario (so an aborted run keeps what finished) and
 * printed to stdout.
 *
 * <p>Thread safety: synchronized.
 */
public final class ClusterReport {

    private final Path file;
    private final String header;
    private final List<ScenarioReport> scenarios = new ArrayList<>();

    public ClusterReport(Path file, String header) {
        this.file = file;
        this.header = header;
    }

    public synchronized void add(ScenarioReport scenario) {
        scenarios.add(scenario);
        System.out.println("[cluster-report] " + scenario.tableRow());
        System.out.print(scenario.details());
        write();
    }

    private void write() {
        StringBuilder b =
                new StringBuilder("# Cluster test report\n\n").append(header).append("\n\n");
        b.append(
                "| backend | scenario | outcome | restarts | completed checkpoints | kills (recovery) | records/s (input / scenario time) | leftover files | exactly-once | seconds |\n");
        b.append("|---|---|---|---|---|---|---|---|---|---|\n");
        for (ScenarioReport s : scenarios) {
            b.append(s.tableRow()).append('\n');
        }
        b.append("\n## Details\n\n");
        for (ScenarioReport s : scenarios) {
            b.append(s.details());
        }
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, b.toString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
