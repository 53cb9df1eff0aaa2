package io.github.flinkstate.disagg.engine.scenario;

import io.github.flinkstate.disagg.engine.LsmOptions;
import io.github.flinkstate.disagg.engine.LsmSnapshot;
import io.github.flinkstate.disagg.engine.LsmStore;
import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.testing.fs.ForwardingFileSystem;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import io.github.flinkstate.testing.hdfs.MiniDfsExtension;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.local.LocalFileSystem;
import org.apache.flink.util.FileUtils;

/**
 * Point reads of a store whose every block read goes to the primary file system (no memory or disk
 * cache): positional reads against seek and read, each on a source borrowed per read. With {@code
 * --fs hdfs} (the default) on a real HDFS ({@code MiniDFSCluster}): HDFS's positional read
 * ("pread") against Flink's HDFS file system behind the test kit's {@link InjectingFileSystem} with
 * positional reads hidden (the engine's way before it used positional reads). With {@code --fs
 * local} on the local file system (the machine's page cache, so the cost is the read path's CPU): a
 * file channel's {@code pread} against Flink's local stream behind the test kit's {@link
 * ForwardingFileSystem} (the engine's way before). The two alternate, one store open at a time, for
 * {@code rounds} rounds; each round times {@code gets} random gets on one thread and then on four
 * threads. A scenario, not a test: it asserts nothing and prints a table.
 *
 * <p>Run: {@code mvn -pl flink-state-disaggregated -o exec:java -Dexec.classpathScope=test
 * -Dexec.mainClass=io.github.flinkstate.disagg.engine.scenario.PointReadScenario
 * -Dexec.args="--rounds 5 --gets 4000"} (on the local file system: {@code --fs local --rounds 5
 * --gets 400000})
 */
public final class PointReadScenario {

    private static final int KEYS = 200_000;
    private static final KeyGroupSpan SPAN = KeyGroupSpan.of(0, 127);

    private PointReadScenario() {}

    public static void main(String[] args) throws Exception {
        int rounds = 5;
        int gets = 4000;
        boolean local = false;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--rounds" -> rounds = Integer.parseInt(args[i + 1]);
                case "--gets" -> gets = Integer.parseInt(args[i + 1]);
                case "--fs" ->
                        local =
                                switch (args[i + 1]) {
                                    case "local" -> true;
                                    case "hdfs" -> false;
                                    default ->
                                            throw new IllegalArgumentException(
                                                    "--fs hdfs|local: " + args[i + 1]);
                                };
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (local) {
            java.nio.file.Path tmp = Files.createTempDirectory("point-read-scenario");
            try {
                run(
                        LocalFileSystem.getSharedInstance(),
                        new ForwardingFileSystem(LocalFileSystem.getSharedInstance()),
                        new Path(tmp.toUri()),
                        rounds,
                        gets);
            } finally {
                FileUtils.deleteDirectory(tmp.toFile());
            }
        } else {
            MiniDfsExtension hdfs = new MiniDfsExtension();
            hdfs.start();
            try {
                FileSystem fs = hdfs.fileSystem();
                run(
                        fs,
                        new InjectingFileSystem(fs).positionalReads(false),
                        hdfs.path("/scenario/store"),
                        rounds,
                        gets);
            } finally {
                hdfs.stop();
            }
        }
        System.exit(0);
    }

    private static void run(FileSystem pread, FileSystem seekRead, Path dir, int rounds, int gets)
            throws Exception {
        byte[] manifest;
        try (LsmStore store = LsmStore.open(new LsmOptions(pread, dir, SPAN))) {
            byte[] value = new byte[100];
            for (int i = 0; i < KEYS; i++) {
                store.put(key(i), value);
            }
            store.flush();
            store.compactUntilIdle();
            try (LsmSnapshot s = store.snapshot()) {
                manifest = s.manifest();
                System.out.printf(
                        "store: %d keys in %d files on %s%n", KEYS, s.files().size(), dir);
            }
        }
        List<double[]> results = new ArrayList<>(); // per round: pread 1, seek 1, pread 4, seek 4
        for (int r = 0; r < rounds; r++) {
            double[] row = new double[4];
            // alternate which mode goes first
            boolean preadFirst = r % 2 == 0;
            for (int m = 0; m < 2; m++) {
                boolean usePread = (m == 0) == preadFirst;
                FileSystem fs = usePread ? pread : seekRead;
                LsmOptions options = new LsmOptions(fs, dir, SPAN).blockCache(new BlockCache(0));
                try (LsmStore store = LsmStore.open(options, List.of(manifest))) {
                    // opens the files (metadata), warms the JIT
                    timeGets(store, Math.max(500, gets / 4), 1, r);
                    double one = timeGets(store, gets, 1, r);
                    double four = timeGets(store, gets, 4, r);
                    row[usePread ? 0 : 1] = one;
                    row[usePread ? 2 : 3] = four;
                }
            }
            results.add(row);
            System.out.printf(
                    Locale.ROOT,
                    "round %d: 1 thread pread %.0f gets/s, seek+read %.0f (%.2fx); 4 threads %.0f"
                            + " against %.0f (%.2fx)%n",
                    r + 1,
                    row[0],
                    row[1],
                    row[0] / row[1],
                    row[2],
                    row[3],
                    row[2] / row[3]);
        }
        System.out.println();
        System.out.println("| threads | pread gets/s | seek+read gets/s | pread / seek+read |");
        System.out.println("|---:|---:|---:|---:|");
        for (int t = 0; t < 2; t++) {
            double[] a = new double[rounds];
            double[] b = new double[rounds];
            double[] ratio = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                a[r] = results.get(r)[t * 2];
                b[r] = results.get(r)[t * 2 + 1];
                ratio[r] = a[r] / b[r];
            }
            System.out.printf(
                    Locale.ROOT,
                    "| %d | %s | %s | %s |%n",
                    t == 0 ? 1 : 4,
                    summary(a, "%.0f"),
                    summary(b, "%.0f"),
                    summary(ratio, "%.2fx"));
        }
    }

    /** Gets per second of {@code gets} random gets spread over {@code threads} threads. */
    private static double timeGets(LsmStore store, int gets, int threads, int seed)
            throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> done = new ArrayList<>();
            long t0 = System.nanoTime();
            for (int t = 0; t < threads; t++) {
                Random random = new Random(seed * 31L + t);
                int share = gets / threads;
                done.add(
                        pool.submit(
                                () -> {
                                    for (int i = 0; i < share; i++) {
                                        if (store.get(key(random.nextInt(KEYS))) == null) {
                                            throw new IllegalStateException("key missing");
                                        }
                                    }
                                    return null;
                                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
            return gets / ((System.nanoTime() - t0) / 1e9);
        } finally {
            pool.shutdownNow();
        }
    }

    /** "median [min - max]" of {@code v}. */
    private static String summary(double[] v, String format) {
        double[] s = v.clone();
        Arrays.sort(s);
        double median =
                s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
        return String.format(Locale.ROOT, format, median)
                + " ["
                + String.format(Locale.ROOT, format, s[0])
                + " - "
                + String.format(Locale.ROOT, format, s[s.length - 1])
                + "]";
    }

    private static byte[] key(int i) {
        byte[] k = new byte[10];
        int kg = i % 128;
        k[0] = (byte) (kg >>> 8);
        k[1] = (byte) kg;
        for (int b = 0; b < 8; b++) {
            k[2 + b] = (byte) ((long) i >>> (56 - 8 * b));
        }
        return k;
    }
}
