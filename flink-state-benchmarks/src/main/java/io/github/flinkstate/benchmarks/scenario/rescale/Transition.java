package io.github.flinkstate.benchmarks.scenario.rescale;

import java.util.ArrayList;
import java.util.List;

/**
 * One rescaling step: a job checkpointed at parallelism {@code from} is restored at parallelism
 * {@code to}. Immutable.
 *
 * <p>Invariant: {@code 1 <= from, to <= 128} (the scenario's max parallelism).
 */
public record Transition(int from, int to) {

    /** FLIP-447's rescaling table. */
    public static final String FLIP_447_MATRIX = "1-2,2-1,2-8,8-2,2-3,3-2";

    public Transition {
        if (from < 1
                || to < 1
                || from > RescaleJobs.MAX_PARALLELISM
                || to > RescaleJobs.MAX_PARALLELISM) {
            throw new IllegalArgumentException(
                    "Parallelism must be in 1.."
                            + RescaleJobs.MAX_PARALLELISM
                            + ": "
                            + from
                            + "->"
                            + to);
        }
    }

    /** Parses {@code "1-2,2-1"} (also {@code "1->2"}). */
    public static List<Transition> parseList(String list) {
        List<Transition> out = new ArrayList<>();
        for (String item : list.split(",")) {
            String s = item.trim();
            if (s.isEmpty()) {
                continue;
            }
            String[] parts = s.split("->|-");
            if (parts.length != 2) {
                throw new IllegalArgumentException("Bad transition '" + s + "'; use e.g. 2-1");
            }
            out.add(
                    new Transition(
                            Integer.parseInt(parts[0].trim()), Integer.parseInt(parts[1].trim())));
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("No transitions in '" + list + "'");
        }
        return out;
    }

    @Override
    public String toString() {
        return from + "->" + to;
    }
}
