package io.github.flinkstate.benchmarks.scenario;

import io.github.flinkstate.benchmarks.common.Args;
import io.github.flinkstate.benchmarks.common.BackendSpec;
import io.github.flinkstate.benchmarks.common.CountPerKeyRun;
import io.github.flinkstate.benchmarks.common.JobStats;
import io.github.flinkstate.benchmarks.report.MachineInfo;
import java.io.File;
import java.io.FileWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;
import org.apache.flink.configuration.Configuration;

/**
 * The FLIP-325 benchmark job as a scenario: a sequence of N longs, key = (x % 500) + 500 * ((x /
 * 1000) % 2), a count per key in ValueState ({@link CountPerKeyRun}: the test kit's job in
 * count-only mode, whose exact per-key check must pass), object reuse, parallelism 1, incremental
 * checkpoints every second to a local directory. Runs every backend in the same process, one after
 * another, and prints records/s as ratios to RocksDB and HashMap; writes JSON with the raw figures.
 *
 * <p>With cache sizes 250 / 500 / 1000 the cache hit ratio is 0% / 50% / 100% (FLIP-325).
 *
 * <p>For each cache run the table also gives the no-overhead mix: the records/s the cache would
 * reach at its measured hit ratio {@code h} if a hit cost what a HashMap record costs and a miss
 * what a RocksDB record costs (a read, and the write-back of a dirty victim, as RocksDB reads and
 * writes every record), i.e. {@code 1 / ((1 - h) / rocksdb + h / hashmap)} from the medians of the
 * same invocation. Its ratio to RocksDB is what a cache with no cost of its own reaches under this
 * model (one delegate read and one write per miss; a cache that wrote its victims back in batches
 * could pass it), and "x mix" is how much of it the cache reaches.
 *
 * <p>Usage: {@code Flip325Scenario [--records N] [--repeats R] [--backends
 * hashmap,rocksdb,lru:250,lru:500,lru:1000] [--json file]}
 */
public final class Flip325Scenario {

    private Flip325Scenario() {}

    public static void main(String[] args) throws Exception {
        Args flags =
                Args.of("Flip325Scenario")
                        .flag("records", "5000000", "records per run")
                        .flag("repeats", "1", "runs per backend (median reported)")
                        .flag("backends", "rocksdb,hashmap,lru:250,lru:500,lru:1000", "backends")
                        .flag("json", "target/flip325-results.json", "result file")
                        .parseOrExit(args);
        long records = flags.getLong("records");
        int repeats = flags.getInt("repeats");
        List<BackendSpec> backends = BackendSpec.parseList(flags.get("backends"));
        File json = new File(flags.get("json"));
        File checkpointRoot = Files.createTempDirectory("flip325").toFile();

        List<JobStats> results = new ArrayList<>();
        for (int r = 0; r < repeats; r++) {
            for (BackendSpec backend : backends) {
                Configuration config = new Configuration();
                backend.applyTo(config);
                config.setString("execution.checkpointing.interval", "1 s");
                config.setString(
                        "execution.checkpointing.dir",
                        new File(checkpointRoot, backend.name().replaceAll("[^a-z0-9]", "_") + r)
                                .toURI()
                                .toString());
                config.setString("pipeline.object-reuse", "true");
                CountPerKeyRun run = CountPerKeyRun.run(backend.name(), records, config, 1);
                if (!run.check().isExact()) {
                    throw new IllegalStateException(backend.name() + ": " + run.check());
                }
                JobStats stats = run.stats();
                results.add(stats);
                System.out.printf(
                        Locale.ROOT,
                        "%-18s run %d: %,.0f records/s%n",
                        backend.name(),
                        r,
                        stats.recordsPerSecond());
            }
        }
        printTable(results);
        writeJson(json, records, results);
        System.out.println("JSON written to " + json.getAbsolutePath());
    }

    /** The median records/s of a backend over the repeats. */
    private static double medianRate(List<JobStats> results, String backend) {
        return median(results, backend, JobStats::recordsPerSecond);
    }

    /** The median cache hit ratio of a backend over the repeats, NaN if it has none. */
    private static double medianHitRatio(List<JobStats> results, String backend) {
        return median(results, backend, JobStats::cacheHitRatio);
    }

    /**
     * The (upper) median of one figure of a backend's repeats, leaving out NaN; NaN if none is
     * left.
     */
    private static double median(
            List<JobStats> results, String backend, ToDoubleFunction<JobStats> figure) {
        List<Double> values = new ArrayList<>();
        for (JobStats s : results) {
            double v = figure.applyAsDouble(s);
            if (s.backend().equals(backend) && !Double.isNaN(v)) {
                values.add(v);
            }
        }
        values.sort(Double::compare);
        return values.isEmpty() ? Double.NaN : values.get(values.size() / 2);
    }

    private static void printTable(List<JobStats> results) {
        double rocks = medianRate(results, "rocksdb");
        double heap = medianRate(results, "hashmap");
        System.out.printf(
                Locale.ROOT,
                "%n%-18s %14s %10s %10s %10s %12s %8s%n",
                "backend",
                "records/s",
                "x rocksdb",
                "x hashmap",
                "cache hit",
                "mix x rocks",
                "x mix");
        List<String> seen = new ArrayList<>();
        for (JobStats s : results) {
            if (seen.contains(s.backend())) {
                continue;
            }
            seen.add(s.backend());
            double rate = medianRate(results, s.backend());
            double hit = medianHitRatio(results, s.backend());
            double mix = noOverheadMix(hit, rocks, heap);
            System.out.printf(
                    Locale.ROOT,
                    "%-18s %,14.0f %10.3f %10.3f %10s %12s %8s%n",
                    s.backend(),
                    rate,
                    rate / rocks,
                    rate / heap,
                    Double.isNaN(hit) ? "-" : String.format(Locale.ROOT, "%.1f%%", 100 * hit),
                    Double.isNaN(mix) ? "-" : String.format(Locale.ROOT, "%.3f", mix / rocks),
                    Double.isNaN(mix) ? "-" : String.format(Locale.ROOT, "%.3f", rate / mix));
        }
    }

    /**
     * The records/s of a cache that costs nothing of its own at hit ratio {@code hit}: hits at
     * {@code heapRate}, misses at {@code rocksRate}; NaN without a hit ratio or either rate.
     */
    static double noOverheadMix(double hit, double rocksRate, double heapRate) {
        if (Double.isNaN(hit) || Double.isNaN(rocksRate) || Double.isNaN(heapRate)) {
            return Double.NaN;
        }
        return 1 / ((1 - hit) / rocksRate + hit / heapRate);
    }

    private static void writeJson(File file, long records, List<JobStats> results)
            throws IOException {
        file.getAbsoluteFile().getParentFile().mkdirs();
        StringBuilder sb = new StringBuilder();
        sb.append("{\n  \"scenario\": \"flip325\",\n");
        sb.append("  \"machine\": ").append(MachineInfo.current().toJson()).append(",\n");
        sb.append("  \"records\": ").append(records).append(",\n  \"runs\": [\n");
        for (int i = 0; i < results.size(); i++) {
            JobStats s = results.get(i);
            sb.append(
                    String.format(
                            Locale.ROOT,
                            "    {\"backend\": \"%s\", \"recordsPerSecond\": %.1f, \"netRuntimeMs\": %d, \"checkpoints\": %d, \"checkpointAvgMs\": %d, \"cacheHitRatio\": %s}%s%n",
                            s.backend(),
                            s.recordsPerSecond(),
                            s.netRuntimeMillis(),
                            s.completedCheckpoints(),
                            s.checkpointAvgMillis(),
                            Double.isNaN(s.cacheHitRatio())
                                    ? "null"
                                    : String.format(Locale.ROOT, "%.4f", s.cacheHitRatio()),
                            i + 1 < results.size() ? "," : ""));
        }
        sb.append("  ]\n}\n");
        try (FileWriter w = new FileWriter(file)) {
            w.write(sb.toString());
        }
    }
}
