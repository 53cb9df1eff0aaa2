package io.github.flinkstate.benchmarks.scenario;

import io.github.flinkstate.benchmarks.common.Args;
import io.github.flinkstate.disagg.engine.key.EntryType;
import io.github.flinkstate.disagg.engine.memtable.Memtable;
import java.util.Locale;

/**
 * Heap a memtable of the disaggregated engine holds for its entries, against the bytes it charges
 * to the write buffer budget ({@code Memtable.approximateBytes}): fills one memtable with {@code
 * --entries} puts of {@code --key-bytes} keys (spread like key-group-prefixed state keys) and
 * {@code --value-bytes} values, and reads the heap in use before and after (after full
 * collections). Run it alone on the machine, in a JVM of its own.
 *
 * <p>Usage: {@code java -cp flink-state-benchmarks/target/benchmarks.jar
 * io.github.flinkstate.benchmarks.scenario.MemtableFootprint --entries 1000000}.
 */
public final class MemtableFootprint {

    private MemtableFootprint() {}

    /** What one fill measured. */
    public record Result(long entries, long heapBytes, long chargedBytes) {
        @Override
        public String toString() {
            return String.format(
                    Locale.ROOT,
                    "entries %d: heap %.1f MB (%.0f B/entry), charged %.1f MB (%.0f B/entry),"
                            + " heap/charged %.2f",
                    entries,
                    heapBytes / 1e6,
                    heapBytes / (double) entries,
                    chargedBytes / 1e6,
                    chargedBytes / (double) entries,
                    heapBytes / (double) chargedBytes);
        }
    }

    public static void main(String[] argv) throws Exception {
        Args args =
                Args.of("MemtableFootprint")
                        .flag("entries", "1000000", "puts of distinct keys into one memtable")
                        .flag("key-bytes", "16", "key length (at least 8)")
                        .flag("value-bytes", "8", "value length")
                        .parseOrExit(argv);
        System.out.println(
                measure(
                        args.getInt("entries"),
                        args.getInt("key-bytes"),
                        args.getInt("value-bytes")));
    }

    /** Fills a memtable; the heap figure is only meaningful in a JVM doing nothing else. */
    public static Result measure(int entries, int keyBytes, int valueBytes) throws Exception {
        if (keyBytes < 8 || entries <= 0 || valueBytes < 0) {
            throw new IllegalArgumentException(
                    "need entries > 0, key-bytes >= 8, value-bytes >= 0");
        }
        long before = heapInUse();
        Memtable m = new Memtable(1);
        for (int i = 0; i < entries; i++) {
            byte[] key = new byte[keyBytes];
            long spread = i * 0x9E3779B97F4A7C15L; // random-looking order, like hashed keys
            for (int j = 0; j < 8; j++) {
                key[j] = (byte) (spread >>> (56 - 8 * j));
            }
            key[keyBytes - 1] = (byte) i;
            m.add(key, i + 1, EntryType.PUT, new byte[valueBytes]);
        }
        long after = heapInUse();
        if (m.entryCount() != entries) {
            throw new IllegalStateException(
                    "memtable holds " + m.entryCount() + " entries, expected " + entries);
        }
        Result r = new Result(entries, after - before, m.approximateBytes());
        if (m.isEmpty()) { // keeps m reachable until after the second reading
            throw new IllegalStateException("empty memtable");
        }
        return r;
    }

    private static long heapInUse() throws InterruptedException {
        Runtime rt = Runtime.getRuntime();
        for (int i = 0; i < 5; i++) {
            System.gc();
            Thread.sleep(50);
        }
        return rt.totalMemory() - rt.freeMemory();
    }
}
