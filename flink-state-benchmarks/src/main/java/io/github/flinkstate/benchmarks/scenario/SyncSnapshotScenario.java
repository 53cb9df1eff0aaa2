package io.github.flinkstate.benchmarks.scenario;

import io.github.flinkstate.benchmarks.common.Args;
import io.github.flinkstate.lru.cow.CacheEntry;
import io.github.flinkstate.lru.cow.CacheOwner;
import io.github.flinkstate.lru.cow.CowLruMap;
import io.github.flinkstate.lru.cow.CowSnapshot;
import java.util.Arrays;
import java.util.Locale;

/**
 * Measures the LRU cache's share of a checkpoint's synchronous phase: {@link CowLruMap#snapshot()}
 * (version bump + shallow copy of the bucket array) with N cached entries, and the first-write
 * copy-on-write cost afterwards. Prints median and max over repeated snapshots.
 *
 * <p>Usage: {@code SyncSnapshotScenario [--entries N]} (default 1,000,000).
 */
public final class SyncSnapshotScenario {

    private SyncSnapshotScenario() {}

    public static void main(String[] args) throws Exception {
        int entries =
                Args.of("SyncSnapshotScenario")
                        .flag("entries", "1000000", "cached entries")
                        .parseOrExit(args)
                        .getInt("entries");
        CacheOwner owner = entry -> {};
        CowLruMap map = new CowLruMap(entries);
        for (int i = 0; i < entries; i++) {
            map.insert(owner, (long) i, "ns", null, 0, (long) i, true);
        }
        int rounds = 50;
        long[] nanos = new long[rounds];
        for (int r = 0; r < rounds + 10; r++) {
            long start = System.nanoTime();
            CowSnapshot s = map.snapshot();
            long took = System.nanoTime() - start;
            map.release(s.version());
            if (r >= 10) {
                nanos[r - 10] = took;
            }
        }
        Arrays.sort(nanos);
        System.out.printf(
                Locale.ROOT,
                "entries=%,d buckets=%,d  sync snapshot: median %.3f ms, max %.3f ms%n",
                entries,
                map.bucketCount(),
                nanos[rounds / 2] / 1e6,
                nanos[rounds - 1] / 1e6);

        // cost of writes right after a snapshot (each entry copied once)
        CowSnapshot s = map.snapshot();
        long start = System.nanoTime();
        for (int i = 0; i < entries; i++) {
            CacheEntry e = map.get(owner, (long) i, "ns", null);
            map.setValue(e, (long) i + 1, true);
        }
        long firstPass = System.nanoTime() - start;
        start = System.nanoTime();
        for (int i = 0; i < entries; i++) {
            CacheEntry e = map.get(owner, (long) i, "ns", null);
            map.setValue(e, (long) i + 2, true);
        }
        long secondPass = System.nanoTime() - start;
        map.release(s.version());
        System.out.printf(
                Locale.ROOT,
                "updates during a running snapshot: first pass %.1f ns/update (%,d copies), second pass %.1f ns/update%n",
                (double) firstPass / entries,
                map.copiesOnWrite(),
                (double) secondPass / entries);
    }
}
