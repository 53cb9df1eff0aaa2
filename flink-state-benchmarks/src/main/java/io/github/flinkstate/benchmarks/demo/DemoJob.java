package io.github.flinkstate.benchmarks.demo;

import io.github.flinkstate.benchmarks.common.BackendSpec;
import io.github.flinkstate.benchmarks.common.JobStats;
import io.github.flinkstate.benchmarks.common.MiniClusterJobRunner;
import java.io.File;
import java.nio.file.Files;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

/**
 * The project's demo: one real streaming job (count per key over a checkpointed sequence source) on
 * an embedded Flink MiniCluster, run once per state backend, with checkpoints to a local directory,
 * one injected failure and recovery, and an exact check of the per-key results. Prints one table.
 *
 * <p>Usage: {@code DemoJob [--records N] [--parallelism P] [--backends
 * hashmap,rocksdb,lru:100000,lru:250,changelog:rocksdb,changelog:lru:100000]}
 */
public final class DemoJob {

    private DemoJob() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> flags = parseFlags(args);
        long records = Long.parseLong(flags.getOrDefault("records", "2000000"));
        int parallelism = Integer.parseInt(flags.getOrDefault("parallelism", "2"));
        List<BackendSpec> backends =
                BackendSpec.parseList(
                        flags.getOrDefault(
                                "backends",
                                "hashmap,rocksdb,lru:100000,lru:250,changelog:rocksdb,changelog:lru:100000"));

        Map<Long, Long> expected = expectedCounts(records);
        File checkpointRoot = Files.createTempDirectory("flinkstate-demo").toFile();
        System.out.printf(
                "Counting %,d records over %d keys, parallelism %d, checkpoints every 200 ms to %s,"
                        + " one injected failure per run%n%n",
                records, expected.size(), parallelism, checkpointRoot);

        StringBuilder table = new StringBuilder();
        table.append(
                String.format(
                        Locale.ROOT,
                        "%-28s %12s %9s %6s %11s %11s %12s %10s %s%n",
                        "backend",
                        "records/s",
                        "restarts",
                        "cps",
                        "cp avg ms",
                        "cp max ms",
                        "state bytes",
                        "cache hit",
                        "exact after recovery"));
        boolean allExact = true;
        for (BackendSpec backend : backends) {
            Configuration config = new Configuration();
            backend.applyTo(config);
            config.setString("execution.checkpointing.interval", "200 ms");
            config.setString(
                    "execution.checkpointing.dir",
                    new File(checkpointRoot, backend.name().replaceAll("[^a-z0-9]", "_"))
                            .toURI()
                            .toString());
            config.setString("restart-strategy.type", "fixed-delay");
            config.setString("restart-strategy.fixed-delay.attempts", "3");
            config.setString("restart-strategy.fixed-delay.delay", "100 ms");
            config.setString("pipeline.object-reuse", "true");

            CountPerKey.resetRun();
            long failAfter = records / parallelism / 2;
            JobStats stats =
                    MiniClusterJobRunner.run(
                            backend.name(),
                            records,
                            config,
                            parallelism,
                            env ->
                                    env.fromSequence(0, records - 1)
                                            .keyBy(CountPerKey::flip325Key, Types.LONG)
                                            .process(new CountPerKey(failAfter))
                                            .sinkTo(new DiscardingSink<>()));
            boolean exact = CountPerKey.MAX_COUNT.equals(expected);
            allExact &= exact;
            table.append(
                    String.format(
                            Locale.ROOT,
                            "%-28s %,12.0f %9d %6d %11d %11d %,12d %10s %s%n",
                            stats.backend(),
                            stats.recordsPerSecond(),
                            stats.restarts(),
                            stats.completedCheckpoints(),
                            stats.checkpointAvgMillis(),
                            stats.checkpointMaxMillis(),
                            stats.latestCheckpointFullSize(),
                            Double.isNaN(stats.cacheHitRatio())
                                    ? "-"
                                    : String.format(
                                            Locale.ROOT, "%.1f%%", 100 * stats.cacheHitRatio()),
                            exact ? "yes" : "NO (" + diff(expected, CountPerKey.MAX_COUNT) + ")"));
            if (!CountPerKey.FAILED.get()) {
                table.append(
                        "  (no failure injected: the job ended before a checkpoint completed)\n");
            }
        }
        System.out.println(table);
        System.out.println(
                allExact
                        ? "All backends recovered with exactly the expected count for every key."
                        : "Some backend did NOT produce exact results after recovery.");
        if (!allExact) {
            System.exit(1);
        }
    }

    static Map<Long, Long> expectedCounts(long records) {
        Map<Long, Long> expected = new HashMap<>();
        for (long x = 0; x < records; x++) {
            expected.merge(CountPerKey.flip325Key(x), 1L, Long::sum);
        }
        return expected;
    }

    private static String diff(Map<Long, Long> expected, Map<Long, Long> actual) {
        long wrong =
                expected.entrySet().stream()
                        .filter(e -> !e.getValue().equals(actual.get(e.getKey())))
                        .count();
        return wrong + " of " + expected.size() + " keys differ";
    }

    static Map<String, String> parseFlags(String[] args) {
        Map<String, String> flags = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                throw new IllegalArgumentException("Expected --name value pairs, got: " + args[i]);
            }
            flags.put(args[i].substring(2), args[++i]);
        }
        return flags;
    }
}
