package io.github.flinkstate.benchmarks.scenario.checkpoint;

import io.github.flinkstate.benchmarks.common.Args;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Renders {@link CheckpointDurationResult}s as Markdown: one row per run, then per backend the
 * median of the runs' p50 durations at each size and its growth from the smallest to the largest
 * size, and the ratio of the first backend to each other one at each size. Stateless.
 */
public final class CheckpointDurationTable {

    private CheckpointDurationTable() {}

    public static String markdown(List<CheckpointDurationResult> results, Args args) {
        StringBuilder b = new StringBuilder();
        b.append(
                String.format(
                        Locale.ROOT,
                        "Settings: %s B values, %s updates/s, %s ms of updates before each"
                                + " checkpoint, %s warm-up and %s measured checkpoints per run,"
                                + " parallelism %s, %s round(s), DFS latency %s ms, bandwidth %s"
                                + " MB/s (0: local file system).%n%n",
                        args.get("value-bytes"),
                        args.get("updates-per-second"),
                        args.get("pause-ms"),
                        args.get("warmup"),
                        args.get("checkpoints"),
                        args.get("parallelism"),
                        args.get("rounds"),
                        args.get("dfs-latency-ms"),
                        args.get("dfs-bandwidth-mbps")));
        b.append(
                "| backend | state (MiB) | load (s) | first checkpoint (ms / MiB) | p50 (ms) | max (ms)"
                        + " | sync phase p50 / max (ms) | new bytes per checkpoint, p50 (MiB)"
                        + " | durations (ms) |\n");
        b.append("|---|---|---|---|---|---|---|---|---|\n");
        for (CheckpointDurationResult r : results) {
            b.append(
                    String.format(
                            Locale.ROOT,
                            "| %s | %d | %.1f | %d / %.0f | %d | %d | %d / %d | %.1f | %s |%n",
                            r.backend(),
                            r.stateBytes() >> 20,
                            r.loadMillis() / 1000.0,
                            r.firstMillis(),
                            r.firstCheckpointedBytes() / 1048576.0,
                            r.p50Millis(),
                            r.maxMillis(),
                            r.p50SyncMillis(),
                            r.maxSyncMillis(),
                            r.p50CheckpointedBytes() / 1048576.0,
                            r.durationsMillis()));
        }

        Map<String, Map<Long, List<Long>>> p50s = new LinkedHashMap<>();
        Set<Long> sizes = new LinkedHashSet<>();
        for (CheckpointDurationResult r : results) {
            sizes.add(r.targetBytes());
            p50s.computeIfAbsent(r.backend(), k -> new LinkedHashMap<>())
                    .computeIfAbsent(r.targetBytes(), k -> new ArrayList<>())
                    .add(r.p50Millis());
        }
        List<Long> sizeList = new ArrayList<>(sizes);
        if (sizeList.isEmpty()) {
            return b.toString();
        }
        long smallest = sizeList.get(0);
        long largest = sizeList.get(sizeList.size() - 1);
        b.append("\n| backend |");
        for (long s : sizeList) {
            b.append(" p50 at ").append(s >> 20).append(" MiB (ms) |");
        }
        b.append(" growth ").append(smallest >> 20).append(" -> ").append(largest >> 20);
        b.append(" MiB |\n|---|");
        b.append("---|".repeat(sizeList.size() + 1)).append('\n');
        for (Map.Entry<String, Map<Long, List<Long>>> e : p50s.entrySet()) {
            b.append("| ").append(e.getKey()).append(" |");
            for (long s : sizeList) {
                b.append(' ').append(median(e.getValue().get(s))).append(" |");
            }
            b.append(
                    String.format(
                            Locale.ROOT,
                            " %.2fx |%n",
                            ratio(
                                    median(e.getValue().get(largest)),
                                    median(e.getValue().get(smallest)))));
        }
        List<String> backends = new ArrayList<>(p50s.keySet());
        if (backends.size() > 1) {
            String ours = backends.get(0);
            b.append("\nRatio of ")
                    .append(ours)
                    .append("'s p50 to each peer's (below 1: faster):\n\n");
            b.append("| peer |");
            for (long s : sizeList) {
                b.append(' ').append(s >> 20).append(" MiB |");
            }
            b.append("\n|---|").append("---|".repeat(sizeList.size())).append('\n');
            for (String peer : backends.subList(1, backends.size())) {
                b.append("| ").append(peer).append(" |");
                for (long s : sizeList) {
                    b.append(
                            String.format(
                                    Locale.ROOT,
                                    " %.2fx |",
                                    ratio(
                                            median(p50s.get(ours).get(s)),
                                            median(p50s.get(peer).get(s)))));
                }
                b.append('\n');
            }
        }
        return b.toString();
    }

    /** One row per NO_CLAIM resume: the first checkpoint after it and the ones after that. */
    public static String noClaimMarkdown(List<NoClaimRestoreResult> results) {
        StringBuilder b = new StringBuilder();
        b.append(
                "| backend | state (MiB) | first checkpoint after the NO_CLAIM resume (ms)"
                        + " | its checkpointed size (MiB) | longest stall of the updates meanwhile"
                        + " (ms) | later checkpoints, p50 (ms) | later durations (ms) |\n");
        b.append("|---|---|---|---|---|---|---|\n");
        for (NoClaimRestoreResult r : results) {
            b.append(
                    String.format(
                            Locale.ROOT,
                            "| %s | %d | %d | %.0f | %d | %d | %s |%n",
                            r.backend(),
                            r.stateBytes() >> 20,
                            r.firstMillis(),
                            r.firstCheckpointedBytes() / 1048576.0,
                            r.longestStallMillis(),
                            r.laterP50Millis(),
                            r.laterMillis()));
        }
        return b.toString();
    }

    private static long median(List<Long> values) {
        if (values == null || values.isEmpty()) {
            return 0;
        }
        List<Long> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        return sorted.get(sorted.size() / 2);
    }

    private static double ratio(long a, long b) {
        return b == 0 ? Double.NaN : (double) a / b;
    }
}
