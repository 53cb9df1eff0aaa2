package io.github.flinkstate.benchmarks.scenario.remote;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * The remote read scenario's results as Markdown: one row per backend configuration and key
 * distribution with medians over the rounds and the range (min-max) beside them, then our backend's
 * ratios against ForSt at the same cache budget and against all-local RocksDB, computed per round
 * (rounds alternate the backends, so one round's runs saw the same machine) and given as the median
 * with the range. Stateless.
 */
public final class RemoteReadTable {

    private RemoteReadTable() {}

    public static String markdown(List<RemoteReadResult> results, String header) {
        Map<String, List<RemoteReadResult>> rows = new LinkedHashMap<>();
        for (RemoteReadResult r : results) {
            rows.computeIfAbsent(r.keys() + " | " + r.label(), x -> new ArrayList<>()).add(r);
        }
        StringBuilder md = new StringBuilder(header).append("\n\n");
        md.append(
                "| keys | backend | runs | steady gets/s | first get (ms) | to 90% of steady (ms) |"
                        + " gets/s, first 5 s | MB read remotely |\n");
        md.append("|---|---|---:|---:|---:|---:|---:|---:|\n");
        for (Map.Entry<String, List<RemoteReadResult>> e : rows.entrySet()) {
            List<RemoteReadResult> runs = e.getValue();
            md.append(
                    String.format(
                            Locale.ROOT,
                            "| %s | %d | %s | %s | %s | %s | %s |\n",
                            e.getKey(),
                            runs.size(),
                            cell(runs, RemoteReadResult::steadyOpsPerSecond),
                            cell(runs, r -> r.firstGetMillis()),
                            cell(runs, r -> r.millisToReach(0.9)),
                            cell(runs, r -> r.meanOpsPerSecond(5)),
                            cell(runs, r -> r.primaryReadBytes() / 1e6)));
        }
        md.append("\nOurs against ForSt at the same budget, and against all-local RocksDB ")
                .append("(per-round ratios: median (min-max)):\n\n");
        md.append(
                "| keys | ours | steady gets/s vs ForSt | to 90% vs ForSt | first 5 s vs ForSt |"
                        + " steady gets/s vs RocksDB |\n");
        md.append("|---|---|---:|---:|---:|---:|\n");
        for (RemoteReadResult ours : results) {
            if (!ours.backend().equals("disaggregated") || ours.round() != 1) {
                continue;
            }
            List<Double> steadyF = new ArrayList<>();
            List<Double> t90F = new ArrayList<>();
            List<Double> first5F = new ArrayList<>();
            List<Double> steadyR = new ArrayList<>();
            for (RemoteReadResult o : results) {
                // the same configuration (label: budget, mmap, hint) in every round
                if (!o.label().equals(ours.label()) || !o.keys().equals(ours.keys())) {
                    continue;
                }
                RemoteReadResult f = find(results, "forst", o.cachePercent(), o);
                RemoteReadResult r = find(results, "rocksdb", -1, o);
                if (f != null) {
                    steadyF.add(o.steadyOpsPerSecond() / f.steadyOpsPerSecond());
                    if (o.millisToReach(0.9) > 0 && f.millisToReach(0.9) > 0) {
                        t90F.add((double) o.millisToReach(0.9) / f.millisToReach(0.9));
                    }
                    first5F.add(o.meanOpsPerSecond(5) / f.meanOpsPerSecond(5));
                }
                if (r != null) {
                    steadyR.add(o.steadyOpsPerSecond() / r.steadyOpsPerSecond());
                }
            }
            md.append(
                    String.format(
                            Locale.ROOT,
                            "| %s | %s | %s | %s | %s | %s |\n",
                            ours.keys(),
                            ours.label(),
                            ratio(steadyF),
                            ratio(t90F),
                            ratio(first5F),
                            ratio(steadyR)));
        }
        md.append(
                "\nSteady = median throughput of the last 30% of the run; \"to 90%\" = from the"
                        + " restore's start until a one-second window first reached 90% of that"
                        + " run's steady throughput (lower is better; its ratio below 1 means"
                        + " sooner).\n");
        return md.toString();
    }

    /**
     * The run of {@code backend} (any budget if {@code percent < 0}) in the same round and keys.
     */
    private static RemoteReadResult find(
            List<RemoteReadResult> results, String backend, int percent, RemoteReadResult like) {
        for (RemoteReadResult r : results) {
            if (r.backend().equals(backend)
                    && (percent < 0 || r.cachePercent() == percent)
                    && r.round() == like.round()
                    && r.keys().equals(like.keys())) {
                return r;
            }
        }
        return null;
    }

    private static String cell(List<RemoteReadResult> runs, ToDoubleFunction<RemoteReadResult> f) {
        double[] v = runs.stream().mapToDouble(f).sorted().toArray();
        if (v.length == 1) {
            return String.format(Locale.ROOT, "%,.0f", v[0]);
        }
        return String.format(Locale.ROOT, "%,.0f (%,.0f-%,.0f)", median(v), v[0], v[v.length - 1]);
    }

    private static String ratio(List<Double> ratios) {
        if (ratios.isEmpty()) {
            return "-";
        }
        double[] v = ratios.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        if (v.length == 1) {
            return String.format(Locale.ROOT, "%.2fx", v[0]);
        }
        return String.format(Locale.ROOT, "%.2fx (%.2f-%.2f)", median(v), v[0], v[v.length - 1]);
    }

    /** The median of {@code values} (not modified). */
    static double median(double[] values) {
        double[] v = values.clone();
        Arrays.sort(v);
        int n = v.length;
        return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    }
}
