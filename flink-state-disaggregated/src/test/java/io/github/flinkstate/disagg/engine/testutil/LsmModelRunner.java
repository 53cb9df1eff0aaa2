package io.github.flinkstate.disagg.engine.testutil;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.LsmOptions;
import io.github.flinkstate.disagg.engine.LsmSnapshot;
import io.github.flinkstate.disagg.engine.LsmStore;
import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.disagg.engine.cache.BlockMemory;
import io.github.flinkstate.disagg.engine.iterator.LsmIterator;
import io.github.flinkstate.disagg.engine.key.Bytes;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.sst.BlockCompression;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.TreeMap;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Seeded randomized model checker: drives {@link LsmStore}s with random puts, deletes, prefix
 * deletes, gets and scans, interleaved with flushes, compactions, snapshots, reopens and
 * merges/splits of snapshots with key-group clipping, and compares every read with a {@link
 * TreeMap} model. Used by the local and the HDFS model tests.
 *
 * <p>Key layout: {@code [kg hi][kg lo][namespace 0..2][decimal digits]}, so prefix deletes of a key
 * group (2 bytes), a namespace (3 bytes) or a digit prefix (4 bytes) all cover real keys.
 */
public final class LsmModelRunner {

    private static final Logger LOG = LoggerFactory.getLogger(LsmModelRunner.class);

    private final FileSystem fs;
    private final Path baseDir;
    private final long seed;
    private final Random rnd;
    private final BlockCache cache;
    private final List<LsmSnapshot> retained = new ArrayList<>();
    private final List<LsmStore> opened = new ArrayList<>();
    private int dirs;
    private int sizeScale = 1;
    private long checks;

    public LsmModelRunner(FileSystem fs, Path baseDir, long seed) {
        this.fs = fs;
        this.baseDir = baseDir;
        this.seed = seed;
        this.rnd = new Random(seed);
        // half the runs with row caches (on a memory large enough for blocks to leave them room),
        // whose rows must never outlive what flushes, prefix tombstones and compactions change;
        // this draw (added 2026-11-29) shifts every later one: older recorded seeds replay
        // differently
        this.cache =
                rnd.nextBoolean()
                        ? new BlockCache(256 * 1024)
                        : new BlockCache(new BlockMemory(4 << 20, 0.5), null);
        LOG.info("LsmModelRunner seed={} dir={}", seed, baseDir);
        System.out.println("LsmModelRunner seed=" + seed + " dir=" + baseDir);
    }

    /** Multiplies memtable and file sizes (fewer, larger files: for slow file systems). */
    public LsmModelRunner sizeScale(int scale) {
        this.sizeScale = scale;
        return this;
    }

    public LsmOptions options(KeyGroupSpan span) {
        return new LsmOptions(fs, new Path(baseDir, "store-" + (dirs++)), span)
                .memtableBytes(sizeScale * (8 * 1024 + rnd.nextInt(16 * 1024)))
                .blockSize(256 + rnd.nextInt(1024))
                .targetFileBytes(sizeScale * (8 * 1024 + rnd.nextInt(16 * 1024)))
                .levelBaseBytes(sizeScale * 32 * 1024)
                .levelMultiplier(4)
                .l0CompactionTrigger(2 + rnd.nextInt(3))
                .numLevels(4 + rnd.nextInt(3))
                .maxOpenFiles(8 + rnd.nextInt(32))
                .bloomBitsPerKey(rnd.nextInt(4) == 0 ? 0 : 10)
                // key group + namespace byte: prefix scans of 3 bytes may skip files
                .bloomPrefix(rnd.nextBoolean() ? k -> k.length >= 3 ? 3 : -1 : null)
                // stores reopened from a snapshot may read files of the other setting
                .compression(rnd.nextBoolean() ? BlockCompression.LZ4 : BlockCompression.NONE)
                .backgroundCompaction(rnd.nextBoolean())
                .blockCache(cache);
    }

    public static NavigableMap<byte[], byte[]> newModel() {
        return new TreeMap<>(Bytes::compare);
    }

    /** Random single-store workload with snapshots and reopen-from-snapshot. */
    public void runSingleStore(int ops) throws IOException {
        KeyGroupSpan span = KeyGroupSpan.of(0, 15);
        NavigableMap<byte[], byte[]> model = newModel();
        LsmStore store = open(options(span));
        store = randomOps(store, model, span, ops, true);
        verifyAll(store, model, span);
        System.out.println(
                "seed "
                        + seed
                        + ": "
                        + store.describe()
                        + " "
                        + store.stats()
                        + " WA="
                        + store.stats().writeAmplification());
        finish();
    }

    /** Two stores, then merge (2->1), split (2->3) with clipping, more writes, compaction. */
    public void runRescale(int opsPerStore) throws IOException {
        KeyGroupSpan spanA = KeyGroupSpan.of(0, 7);
        KeyGroupSpan spanB = KeyGroupSpan.of(8, 15);
        NavigableMap<byte[], byte[]> modelA = newModel();
        NavigableMap<byte[], byte[]> modelB = newModel();
        LsmStore a = randomOps(open(options(spanA)), modelA, spanA, opsPerStore, false);
        LsmStore b = randomOps(open(options(spanB)), modelB, spanB, opsPerStore, false);
        LsmSnapshot sa = retain(a.snapshot());
        LsmSnapshot sb = retain(b.snapshot());
        // Writes after the snapshot must not leak into restores.
        a.put(key(3, 0, 12345), new byte[] {1});
        b.deletePrefix(KeyGroupSpan.prefixOf(9));
        List<byte[]> both = List.of(sa.manifest(), sb.manifest());

        // 2 -> 1
        NavigableMap<byte[], byte[]> union = newModel();
        union.putAll(modelA);
        union.putAll(modelB);
        KeyGroupSpan all = KeyGroupSpan.of(0, 15);
        LsmStore merged = open(LsmStore.open(options(all), both));
        verifyAll(merged, union, all);
        merged = randomOps(merged, union, all, opsPerStore / 2, true);
        verifyAll(merged, union, all);

        // 2 -> 3, each new store clipped at read time
        int cut1 = 1 + rnd.nextInt(6);
        int cut2 = 8 + rnd.nextInt(6);
        KeyGroupSpan[] spans = {
            KeyGroupSpan.of(0, cut1), KeyGroupSpan.of(cut1 + 1, cut2), KeyGroupSpan.of(cut2 + 1, 15)
        };
        NavigableMap<byte[], byte[]> source = newModel();
        source.putAll(modelA);
        source.putAll(modelB);
        for (KeyGroupSpan s : spans) {
            NavigableMap<byte[], byte[]> m = restrict(source, s);
            LsmStore part = open(LsmStore.open(options(s), both));
            verifyAll(part, m, s);
            part = randomOps(part, m, s, opsPerStore / 4, true);
            part.compactAll();
            part.checkInvariants();
            System.out.println(
                    "seed " + seed + " part " + s + ": " + part.describe() + " " + part.stats());
            verifyAll(part, m, s);
            LsmSnapshot ps = retain(part.snapshot());
            LsmStore again = open(LsmStore.open(options(s), List.of(ps.manifest())));
            verifyAll(again, m, s);
        }
        finish();
    }

    private LsmStore randomOps(
            LsmStore store,
            NavigableMap<byte[], byte[]> model,
            KeyGroupSpan span,
            int ops,
            boolean allowReopen)
            throws IOException {
        for (int i = 0; i < ops; i++) {
            int r = rnd.nextInt(1000);
            if (r < 450) {
                byte[] k = randomKey(span, model);
                byte[] v = randomValue();
                store.put(k, v);
                model.put(k, v);
            } else if (r < 550) {
                byte[] k = randomKey(span, model);
                store.delete(k);
                model.remove(k);
            } else if (r < 565) {
                byte[] p = randomPrefix(span);
                store.deletePrefix(p);
                byte[] limit = Bytes.prefixLimit(p);
                (limit == null ? model.tailMap(p, true) : model.subMap(p, true, limit, false))
                        .clear();
            } else if (r < 800) {
                byte[] k = randomKey(span, model);
                byte[] got = store.get(k);
                assertThat(got)
                        .as("get %s (seed %d, op %d)", Bytes.hex(k), seed, i)
                        .isEqualTo(model.get(k));
                checks++;
            } else if (r < 830) {
                byte[] p = Arrays.copyOf(randomPrefix(span), 2 + rnd.nextInt(3));
                if (p.length > 3) {
                    p[3] = (byte) ('0' + rnd.nextInt(10));
                }
                if (p.length > 2) {
                    p[2] = (byte) rnd.nextInt(3);
                }
                byte[] limit = Bytes.prefixLimit(p);
                try (LsmIterator it = store.scanPrefix(p)) {
                    assertSame(
                            it,
                            limit == null
                                    ? model.tailMap(p, true)
                                    : model.subMap(p, true, limit, false),
                            "prefix " + Bytes.hex(p) + " op " + i);
                }
            } else if (r < 840) {
                int s = span.start() + rnd.nextInt(span.end() - span.start() + 1);
                int e = s + rnd.nextInt(span.end() - s + 1);
                try (LsmIterator it = store.scanKeyGroups(KeyGroupSpan.of(s, e))) {
                    assertSame(it, restrict(model, KeyGroupSpan.of(s, e)), "kg scan op " + i);
                }
            } else if (r < 850) {
                store.flush();
            } else if (r < 856) {
                store.compactOnce();
            } else if (r < 858 && allowReopen) {
                LsmSnapshot snap = retain(store.snapshot());
                LsmStore reopened = open(LsmStore.open(options(span), List.of(snap.manifest())));
                verifyAll(reopened, model, span);
                store.close();
                store = reopened;
            } else if (r < 859) {
                store.compactAll();
            } else {
                byte[] k = key(span.start(), 2, 1_000_000 + rnd.nextInt(1000));
                assertThat(store.get(k)).isNull();
            }
            if (i % 250 == 0) {
                store.checkInvariants();
            }
        }
        store.checkInvariants();
        return store;
    }

    public void verifyAll(LsmStore store, NavigableMap<byte[], byte[]> model, KeyGroupSpan span)
            throws IOException {
        store.checkInvariants();
        try (LsmIterator it = store.scanAll()) {
            assertSame(it, model, "full scan of " + span);
        }
        for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
            if (rnd.nextInt(8) == 0) {
                assertThat(store.get(e.getKey()))
                        .as("get %s seed %d", Bytes.hex(e.getKey()), seed)
                        .isEqualTo(e.getValue());
            }
        }
    }

    private void assertSame(LsmIterator it, Map<byte[], byte[]> expected, String what)
            throws IOException {
        List<String> got = new ArrayList<>();
        while (it.isValid()) {
            got.add(Bytes.hex(it.key()) + "=" + Bytes.hex(it.value()));
            it.next();
        }
        List<String> want = new ArrayList<>();
        expected.forEach((k, v) -> want.add(Bytes.hex(k) + "=" + Bytes.hex(v)));
        assertThat(got).as("%s (seed %d)", what, seed).isEqualTo(want);
        checks++;
    }

    private static NavigableMap<byte[], byte[]> restrict(
            NavigableMap<byte[], byte[]> m, KeyGroupSpan s) {
        NavigableMap<byte[], byte[]> out = newModel();
        byte[] limit = s.limitKey();
        out.putAll(
                limit == null
                        ? m.tailMap(s.lowerKey(), true)
                        : m.subMap(s.lowerKey(), true, limit, false));
        return out;
    }

    private byte[] randomKey(KeyGroupSpan span, NavigableMap<byte[], byte[]> model) {
        if (!model.isEmpty() && rnd.nextInt(3) == 0) {
            byte[] probe =
                    key(
                            span.start() + rnd.nextInt(span.end() - span.start() + 1),
                            rnd.nextInt(3),
                            rnd.nextInt(300));
            Map.Entry<byte[], byte[]> e = model.ceilingEntry(probe);
            if (e != null) {
                return e.getKey();
            }
        }
        int kg = span.start() + rnd.nextInt(span.end() - span.start() + 1);
        return key(kg, rnd.nextInt(3), rnd.nextInt(300));
    }

    private byte[] randomPrefix(KeyGroupSpan span) {
        int kg = span.start() + rnd.nextInt(span.end() - span.start() + 1);
        byte[] k = key(kg, rnd.nextInt(3), rnd.nextInt(300));
        int r = rnd.nextInt(10);
        return Arrays.copyOf(k, r < 2 ? 2 : r < 8 ? 3 : 4);
    }

    /** The number of live entries of {@code store} under {@code prefix}. */
    public static int countPrefix(LsmStore store, byte[] prefix) throws IOException {
        int n = 0;
        try (LsmIterator it = store.scanPrefix(prefix)) {
            for (; it.isValid(); it.next()) {
                n++;
            }
        }
        return n;
    }

    public static byte[] key(int kg, int ns, int n) {
        byte[] digits = Integer.toString(n).getBytes();
        byte[] k = new byte[3 + digits.length];
        k[0] = (byte) (kg >>> 8);
        k[1] = (byte) kg;
        k[2] = (byte) ns;
        System.arraycopy(digits, 0, k, 3, digits.length);
        return k;
    }

    private byte[] randomValue() {
        int len = rnd.nextInt(20) == 0 ? 200 + rnd.nextInt(800) : rnd.nextInt(30);
        byte[] v = new byte[len];
        rnd.nextBytes(v);
        return v;
    }

    private LsmStore open(LsmOptions o) throws IOException {
        return open(LsmStore.open(o));
    }

    private LsmStore open(LsmStore s) {
        opened.add(s);
        return s;
    }

    private LsmSnapshot retain(LsmSnapshot s) {
        retained.add(s);
        return s;
    }

    private void finish() {
        for (LsmStore s : opened) {
            s.close();
        }
        for (LsmSnapshot s : retained) {
            s.release();
        }
        cache.checkInvariants();
        LOG.info(
                "seed {} done: {} checks, {} stores, {} snapshots",
                seed,
                checks,
                opened.size(),
                retained.size());
    }

    public long checks() {
        return checks;
    }
}
