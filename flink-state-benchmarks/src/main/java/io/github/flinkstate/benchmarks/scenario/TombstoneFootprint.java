package io.github.flinkstate.benchmarks.scenario;

import io.github.flinkstate.benchmarks.common.Args;
import io.github.flinkstate.disagg.engine.LsmOptions;
import io.github.flinkstate.disagg.engine.LsmSnapshot;
import io.github.flinkstate.disagg.engine.LsmStore;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import java.io.File;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.util.FileUtils;

/**
 * How many prefix tombstones a list-heavy workload leaves in the disaggregated engine's files, and
 * what they add to every checkpoint's manifest. Keys are laid out like the backend's list entries
 * (key group, 8-byte key, namespace byte; bloom prefix = that whole prefix): {@code --lists} lists
 * get one element each, then {@code --updates} list replacements ({@code deletePrefix} plus one
 * append, what {@code ListState.update} writes), a share {@code --new-share} of them of lists that
 * never existed (as the JMH {@code listAdd}), the others of existing lists ({@code listUpdate}).
 * Background compaction runs as in a job; at the end the store is flushed and compacted until idle,
 * and the run prints the live files' prefix tombstones and the manifest's size.
 *
 * <p>Usage: {@code java -cp flink-state-benchmarks/target/benchmarks.jar
 * io.github.flinkstate.benchmarks.scenario.TombstoneFootprint --lists 500000 --updates 2000000}.
 */
public final class TombstoneFootprint {

    private static final int KEY_GROUPS = 128;
    private static final int PREFIX_BYTES = 2 + 8 + 1;

    private TombstoneFootprint() {}

    /** The live files' prefix tombstones and the manifest a checkpoint would carry. */
    public record Footprint(long tombstones, int manifestBytes, String levels) {
        @Override
        public String toString() {
            return String.format(
                    Locale.ROOT,
                    "prefix tombstones %d, manifest %.1f KB, files per level %s",
                    tombstones,
                    manifestBytes / 1e3,
                    levels);
        }
    }

    /**
     * What one run measured: right after the writes (compaction may lag behind), and once
     * compaction has nothing left to do.
     */
    public record Result(Footprint atEnd, Footprint settled, double writeSeconds) {
        @Override
        public String toString() {
            return String.format(
                    Locale.ROOT,
                    "after the writes (%.1f s): %s%nonce compaction is idle: %s",
                    writeSeconds,
                    atEnd,
                    settled);
        }
    }

    private static Footprint footprint(LsmStore store) throws Exception {
        try (LsmSnapshot snap = store.snapshot()) {
            return new Footprint(
                    store.storedPrefixTombstones(),
                    snap.manifest().length,
                    Arrays.toString(store.filesPerLevel()));
        }
    }

    public static void main(String[] argv) throws Exception {
        Args args =
                Args.of("TombstoneFootprint")
                        .flag("lists", "500000", "lists written once before the updates")
                        .flag("updates", "2000000", "list replacements")
                        .flag("new-share", "0.5", "share of replacements of lists never written")
                        .flag("memtable-mb", "1", "memtable size (MiB)")
                        .flag("level-base-mb", "4", "level 1 target size (MiB)")
                        .parseOrExit(argv);
        System.out.println(
                measure(
                        args.getInt("lists"),
                        args.getInt("updates"),
                        args.getDouble("new-share"),
                        args.getInt("memtable-mb"),
                        args.getInt("level-base-mb")));
    }

    public static Result measure(
            int lists, int updates, double newShare, int memtableMb, int levelBaseMb)
            throws Exception {
        File dir = Files.createTempDirectory("tombstone-footprint").toFile();
        LsmOptions o =
                new LsmOptions(
                                FileSystem.getLocalFileSystem(),
                                new Path(dir.toURI()),
                                KeyGroupSpan.of(0, KEY_GROUPS - 1))
                        .memtableBytes((long) memtableMb << 20)
                        .levelBaseBytes((long) levelBaseMb << 20)
                        .bloomPrefix(k -> k.length >= PREFIX_BYTES ? PREFIX_BYTES : -1);
        try (LsmStore store = LsmStore.open(o)) {
            SplittableRandom rnd = new SplittableRandom(42);
            byte[] element = new byte[8];
            long t0 = System.nanoTime();
            for (long i = 0; i < lists; i++) {
                store.append(prefix(i), element);
            }
            long next = lists;
            for (int u = 0; u < updates; u++) {
                long list = rnd.nextDouble() < newShare ? next++ : rnd.nextLong(lists);
                byte[] p = prefix(list);
                store.deletePrefix(p);
                store.append(p, element);
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            Footprint atEnd = footprint(store);
            store.compactUntilIdle();
            return new Result(atEnd, footprint(store), seconds);
        } finally {
            FileUtils.deleteDirectoryQuietly(dir);
        }
    }

    /** The list prefix of list {@code i}: key group, key, namespace 0. */
    private static byte[] prefix(long i) {
        byte[] p = new byte[PREFIX_BYTES];
        int kg = (int) Math.floorMod(i * 0x9E3779B97F4A7C15L >>> 40, KEY_GROUPS);
        p[0] = (byte) (kg >>> 8);
        p[1] = (byte) kg;
        for (int b = 0; b < 8; b++) {
            p[2 + b] = (byte) (i >>> (56 - 8 * b));
        }
        return p;
    }
}
