package io.github.flinkstate.cluster.report;

import java.util.ArrayList;
import java.util.List;

/**
 * What one scenario observed, for the cluster report: the jobs it ran, the TaskManagers it killed,
 * the leftover files and the exactly-once verdict. Filled in by the scenario as it runs, so a
 * failed scenario still reports how far it got.
 *
 * <p>Not thread-safe (one scenario thread).
 */
public final class ScenarioReport {

    private final String backend;
    private final String scenario;
    private final List<String> jobs = new ArrayList<>();
    private final List<String> kills = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();
    private String leftovers = "not checked";
    private String verdict = "not checked";
    private String outcome = "running";
    private long restarts;
    private long completedCheckpoints;
    private double recordsPerSecond = Double.NaN;
    private long seconds;

    public ScenarioReport(String backend, String scenario) {
        this.backend = backend;
        this.scenario = scenario;
    }

    /** One job of the scenario, e.g. {@code p=2 NO_CLAIM from chk-4: CANCELED, 3 checkpoints}. */
    public void job(String line, long restarts, long completedCheckpoints) {
        jobs.add(line);
        this.restarts += restarts;
        this.completedCheckpoints += completedCheckpoints;
    }

    public void kill(String line) {
        kills.add(line);
    }

    public void note(String line) {
        notes.add(line);
    }

    public void leftovers(String summary) {
        this.leftovers = summary;
    }

    public void verdict(String summary) {
        this.verdict = summary;
    }

    public void throughput(double recordsPerSecond) {
        this.recordsPerSecond = recordsPerSecond;
    }

    public void finish(String outcome, long seconds) {
        this.outcome = outcome;
        this.seconds = seconds;
    }

    String tableRow() {
        return "| "
                + backend
                + " | "
                + scenario
                + " | "
                + outcome
                + " | "
                + restarts
                + " | "
                + completedCheckpoints
                + " | "
                + (kills.isEmpty() ? "-" : String.join("; ", kills))
                + " | "
                + (Double.isNaN(recordsPerSecond) ? "-" : String.format("%,.0f", recordsPerSecond))
                + " | "
                + leftovers
                + " | "
                + verdict
                + " | "
                + seconds
                + " |";
    }

    String details() {
        StringBuilder b = new StringBuilder();
        b.append("### ").append(backend).append(": ").append(scenario).append("\n\n");
        for (String j : jobs) {
            b.append("- job: ").append(j).append('\n');
        }
        for (String k : kills) {
            b.append("- kill -9: ").append(k).append('\n');
        }
        for (String n : notes) {
            b.append("- ").append(n).append('\n');
        }
        b.append("- leftover files: ").append(leftovers).append('\n');
        b.append("- ").append(verdict).append('\n');
        b.append("- outcome: ").append(outcome).append(" in ").append(seconds).append(" s\n\n");
        return b.toString();
    }

    @Override
    public String toString() {
        return details();
    }
}
