package io.github.flinkstate.benchmarks.report;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The results of one suite arranged as rows (benchmark plus the parameters that vary within the
 * suite) by backends, with ratios to the baselines {@code rocksdb} and {@code hashmap} (matched
 * case-insensitively). Immutable after construction.
 */
public final class ResultTable {

    /** Preferred column order; other backends follow in order of appearance. */
    private static final List<String> ORDER =
            List.of(
                    "hashmap",
                    "rocksdb",
                    "rocksdb-ingest",
                    "lru_0",
                    "lru(250)+rocksdb",
                    "lru_50",
                    "lru(500)+rocksdb",
                    "lru_100",
                    "lru(1000)+rocksdb",
                    "lsm");

    private final String suite;
    private final List<String> backends;
    private final Map<String, Map<String, BenchResult>> rows = new LinkedHashMap<>();
    private final Map<String, String> fixedParams = new LinkedHashMap<>();
    private final String unit;

    public ResultTable(String suite, List<BenchResult> results) {
        this.suite = suite;
        Map<String, Set<String>> values = new LinkedHashMap<>();
        Set<String> seen = new LinkedHashSet<>();
        for (BenchResult r : results) {
            seen.add(r.backend());
            r.params().forEach((k, v) -> values.computeIfAbsent(k, x -> new TreeSet<>()).add(v));
        }
        List<String> varying = new ArrayList<>();
        values.forEach(
                (k, v) -> {
                    if (v.size() > 1) {
                        varying.add(k);
                    } else {
                        fixedParams.put(k, v.iterator().next());
                    }
                });
        List<String> ordered = new ArrayList<>();
        for (String o : ORDER) {
            for (String b : seen) {
                if (b.equalsIgnoreCase(o)) {
                    ordered.add(b);
                }
            }
        }
        for (String b : seen) {
            if (!ordered.contains(b)) {
                ordered.add(b);
            }
        }
        this.backends = List.copyOf(ordered);
        for (BenchResult r : results) {
            StringBuilder label = new StringBuilder(r.benchmark());
            for (String k : varying) {
                label.append(label.length() == r.benchmark().length() ? " (" : ", ")
                        .append(k)
                        .append('=')
                        .append(r.params().get(k));
            }
            if (!varying.isEmpty()) {
                label.append(')');
            }
            rows.computeIfAbsent(label.toString(), x -> new LinkedHashMap<>()).put(r.backend(), r);
        }
        this.unit = results.isEmpty() ? "" : results.get(0).unit();
    }

    public String suite() {
        return suite;
    }

    public List<String> backends() {
        return backends;
    }

    public List<String> rowLabels() {
        return List.copyOf(rows.keySet());
    }

    public String unit() {
        return unit;
    }

    /**
     * True for time units ({@code ms}, {@code s}, {@code .../op}) and sizes ({@code bytes}): a
     * lower score is better.
     */
    public boolean lowerIsBetter() {
        return unit.equals("ms")
                || unit.equals("s")
                || unit.endsWith("/op")
                || unit.equals("bytes");
    }

    /** True for time units. */
    public boolean isTime() {
        return lowerIsBetter() && !unit.equals("bytes");
    }

    /** Parameters with one value across the suite, e.g. {@code setupKeyCount=500000}. */
    public Map<String, String> fixedParams() {
        return fixedParams;
    }

    /** The result of {@code backend} in {@code row}, or null. */
    public BenchResult get(String row, String backend) {
        return rows.getOrDefault(row, Map.of()).get(backend);
    }

    /** The baseline column named {@code name} (case-insensitive), or null if absent. */
    public String baseline(String name) {
        for (String b : backends) {
            if (b.equalsIgnoreCase(name)) {
                return b;
            }
        }
        return null;
    }

    /**
     * Score of {@code backend} divided by the score of {@code baseline} in {@code row}; NaN if
     * either is missing.
     */
    public double ratio(String row, String backend, String baseline) {
        BenchResult r = get(row, backend);
        BenchResult b = baseline == null ? null : get(row, baseline);
        return r == null || b == null || b.score() == 0 ? Double.NaN : r.score() / b.score();
    }

    static String formatScore(double v) {
        if (Double.isNaN(v)) {
            return "n/a";
        }
        double a = Math.abs(v);
        String pattern = a >= 100 ? "%,.0f" : a >= 10 ? "%.1f" : a >= 1 ? "%.2f" : "%.3f";
        return String.format(Locale.ROOT, pattern, v);
    }

    static String formatRatio(double r) {
        if (Double.isNaN(r)) {
            return "-";
        }
        return String.format(Locale.ROOT, r >= 10 ? "%.1fx" : "%.2fx", r);
    }
}
