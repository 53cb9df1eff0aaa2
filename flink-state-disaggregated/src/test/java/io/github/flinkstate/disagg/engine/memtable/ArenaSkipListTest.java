package io.github.flinkstate.disagg.engine.memtable;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.key.Bytes;
import io.github.flinkstate.disagg.engine.key.EntryType;
import io.github.flinkstate.disagg.engine.sst.BloomFilter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link ArenaSkipList} against a {@link TreeMap} model (puts, rewrites, removals, seeks, values
 * larger than a chunk), and under one writer with concurrent readers.
 */
class ArenaSkipListTest {

    /** Model value: sequence number, type, value. */
    private record Entry(long seq, byte type, byte[] value) {}

    @Test
    void randomOperations_matchASortedMapModel() {
        randomOperations(false, ArenaSkipListTest::randomKey);
    }

    /** The same with the key hash index: removed keys may be found as removed nodes. */
    @Test
    void randomOperations_withTheHashIndex_matchASortedMapModel() {
        randomOperations(true, ArenaSkipListTest::randomKey);
    }

    /**
     * Keys of up to 21 bytes sharing prefixes that end on both sides of the 8-byte words a node
     * holds its key in, with bytes that order differently signed and unsigned.
     */
    @Test
    void keysAcrossWordBoundaries_orderAsUnsignedBytes() {
        randomOperations(false, ArenaSkipListTest::wordCrossingKey);
        randomOperations(true, ArenaSkipListTest::wordCrossingKey);
    }

    /**
     * Writes in ascending and descending runs of nearby keys (as a map's {@code putAll} makes,
     * where a search starts from the last write's path), mixed with prefix removals and random
     * keys, against the model.
     */
    @Test
    void runsOfNearbyKeys_inBothDirections_matchASortedMapModel() {
        for (boolean indexed : new boolean[] {false, true}) {
            Random random = new Random(11);
            ArenaSkipList list = new ArenaSkipList(indexed);
            TreeMap<byte[], Entry> model = new TreeMap<>(Bytes::compare);
            long seq = 0;
            for (int run = 0; run < 3_000; run++) {
                byte[] base = Arrays.copyOf(spreadKey(random.nextInt(400)), 12);
                int kind = random.nextInt(8);
                if (kind == 0) {
                    long expected =
                            model.keySet().stream().filter(k -> Bytes.startsWith(k, base)).count();
                    assertThat(list.removePrefix(base)).isEqualTo(expected);
                    model.keySet().removeIf(k -> Bytes.startsWith(k, base));
                    continue;
                }
                int length = 1 + random.nextInt(12);
                for (int i = 0; i < length; i++) {
                    int suffix = kind < 4 ? i : kind < 7 ? length - i : random.nextInt(64);
                    byte[] key = Arrays.copyOf(base, base.length + 1);
                    key[base.length] = (byte) (suffix * 3);
                    byte[] value = randomValue(random);
                    boolean added = put(list, indexed, key, ++seq, EntryType.PUT, value);
                    assertThat(added).isEqualTo(!model.containsKey(key));
                    model.put(key, new Entry(seq, EntryType.PUT, value));
                }
                if (run % 100 == 0) {
                    list.checkInvariants();
                }
            }
            list.checkInvariants();
            assertScanFrom(list, model, Bytes.EMPTY);
            for (Map.Entry<byte[], Entry> e : model.entrySet()) {
                byte[] key = e.getKey();
                long n =
                        indexed
                                ? list.findExactHashed(key, BloomFilter.hash(key))
                                : list.findExact(key, key.length);
                assertSame(list, list.record(n), e.getValue());
            }
            for (int i = 0; i < 200; i++) {
                assertScanFrom(list, model, Arrays.copyOf(spreadKey(random.nextInt(400)), 12));
            }
        }
    }

    private static void randomOperations(boolean indexed, Function<Random, byte[]> keys) {
        for (long s = 1; s <= 5; s++) {
            Random random = new Random(s);
            ArenaSkipList list = new ArenaSkipList(indexed);
            TreeMap<byte[], Entry> model = new TreeMap<>(Bytes::compare);
            long seq = 0;
            for (int op = 0; op < 20_000; op++) {
                if (op % 1000 == 0) {
                    list.checkInvariants();
                }
                byte[] key = keys.apply(random);
                int kind = random.nextInt(10);
                if (kind < 7) {
                    byte type = random.nextInt(5) == 0 ? EntryType.DELETE : EntryType.PUT;
                    byte[] value = type == EntryType.PUT ? randomValue(random) : null;
                    boolean added = put(list, indexed, key, ++seq, type, value);
                    assertThat(added).isEqualTo(!model.containsKey(key));
                    model.put(key, new Entry(seq, type, value));
                } else if (kind < 8) {
                    long expected =
                            model.keySet().stream().filter(k -> Bytes.startsWith(k, key)).count();
                    assertThat(list.removePrefix(key)).isEqualTo(expected);
                    model.keySet().removeIf(k -> Bytes.startsWith(k, key));
                } else {
                    long n =
                            indexed
                                    ? list.findExactHashed(key, BloomFilter.hash(key))
                                    : list.findExact(key, key.length);
                    Entry e = model.get(key);
                    if (e == null) {
                        assertThat(n == 0 || list.record(n) == ArenaSkipList.REMOVED).isTrue();
                    } else {
                        assertSame(list, list.record(n), e);
                    }
                }
            }
            // a full scan and seeks to random keys agree with the model; removed keys are gone
            assertScanFrom(list, model, Bytes.EMPTY);
            for (int i = 0; i < 200; i++) {
                assertScanFrom(list, model, keys.apply(random));
            }
        }
    }

    @Test
    void valuesLargerThanAChunk_getChunksOfTheirOwn() {
        ArenaSkipList list = new ArenaSkipList();
        byte[] big = new byte[3 << 20];
        new Random(7).nextBytes(big);
        list.put(new byte[] {1}, 1, EntryType.PUT, new byte[] {9});
        list.put(new byte[] {2}, 2, EntryType.PUT, big);
        list.put(new byte[] {3}, 3, EntryType.PUT, new byte[] {8});
        assertThat(list.value(list.record(list.findExact(new byte[] {2}, 1)))).isEqualTo(big);
        assertThat(list.value(list.record(list.findExact(new byte[] {3}, 1)))).containsExactly(8);
        assertThat(list.usedBytes()).isGreaterThanOrEqualTo(big.length);
    }

    @Test
    void keysLargerThanANodeChunk_getChunksOfTheirOwn() {
        for (boolean indexed : new boolean[] {false, true}) {
            ArenaSkipList list = new ArenaSkipList(indexed);
            byte[] big = new byte[(2 << 20) + 3]; // over the largest node chunk of 1 MiB
            new Random(5).nextBytes(big);
            big[0] = 2;
            byte[][] keys = {{1}, big, {3}, Arrays.copyOf(big, big.length - 1)};
            for (int i = 0; i < keys.length; i++) {
                byte[] key = keys[i];
                put(list, indexed, key, i + 1, EntryType.PUT, new byte[] {(byte) i});
            }
            for (int i = 0; i < keys.length; i++) {
                long n = list.findExact(keys[i], keys[i].length);
                assertThat(list.key(n)).isEqualTo(keys[i]);
                assertThat(list.value(list.record(n))).containsExactly(i);
            }
            assertThat(list.key(list.next(list.ceiling(new byte[] {2})))).isEqualTo(big);
            assertThat(list.usedBytes()).isGreaterThan(2L * big.length);
        }
    }

    @Test
    void aLargeMemtable_growsByChunksOfAtMostTheLargestSize() {
        ArenaSkipList list = new ArenaSkipList();
        byte[] value = new byte[1000];
        for (int i = 0; i < 40_000; i++) { // 40 MB of values, 2 MB of keys and headers
            list.put(intKey(i), i + 1, EntryType.PUT, value);
        }
        // 4 KiB doubling to 1 MiB: 9 chunks for the first 2 MiB, then one per MiB
        assertThat(list.byteChunkCount()).isBetween(45, 55);
        assertThat(list.nodeChunkCount()).isLessThan(10);
        assertThat(list.usedBytes()).isGreaterThan(40_000L * value.length);
    }

    @Test
    void findExact_matchesAPrefixOfTheSearchKey() {
        ArenaSkipList list = new ArenaSkipList();
        list.put(new byte[] {1, 2}, 1, EntryType.DELETE, null);
        assertThat(list.findExact(new byte[] {1, 2, 3}, 2)).isNotZero();
        assertThat(list.findExact(new byte[] {1, 2, 3}, 3)).isZero();
        assertThat(list.findExact(new byte[] {1, 2, 3}, 1)).isZero();
        assertThat(list.value(list.record(list.findExact(new byte[] {1, 2}, 2)))).isNull();
    }

    @Test
    void anEmptyList_allocatesNothing_andFindsNothing() {
        ArenaSkipList list = new ArenaSkipList();
        assertThat(list.usedBytes()).isZero();
        assertThat(list.ceiling(Bytes.EMPTY)).isZero();
        assertThat(list.next(0)).isZero();
        assertThat(list.findExact(new byte[] {1}, 1)).isZero();
    }

    /**
     * One writer puts, rewrites and removes while readers scan and look up: every scan is sorted,
     * and every record a reader sees is whole (its value encodes its key and sequence number).
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void readersDuringWrites_seeSortedKeysAndWholeRecords() throws Exception {
        ArenaSkipList list = new ArenaSkipList();
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> readers = new ArrayList<>();
        for (int r = 0; r < 3; r++) {
            Random random = new Random(100 + r);
            Thread t =
                    new Thread(
                            () -> {
                                try {
                                    while (!done.get()) {
                                        readOnce(list, random);
                                    }
                                } catch (Throwable e) {
                                    failure.compareAndSet(null, e);
                                }
                            });
            t.start();
            readers.add(t);
        }
        Random random = new Random(1);
        for (long seq = 1; seq <= 300_000 && failure.get() == null; seq++) {
            byte[] key = intKey(random.nextInt(50_000));
            if (random.nextInt(10) == 0) {
                list.removePrefix(Arrays.copyOf(key, 3)); // up to 256 neighbouring keys
            } else {
                list.put(key, seq, EntryType.PUT, valueFor(key, seq, random.nextInt(40)));
            }
        }
        done.set(true);
        for (Thread t : readers) {
            t.join();
        }
        assertThat(failure.get()).isNull();
    }

    /**
     * A key put before a search began is always found, even while the writer puts keys between it
     * and its predecessor (a search once re-read the predecessor's link after comparing, and so
     * returned such a newer, smaller key instead).
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aPublishedKey_isFoundByEverySearchThatStartsAfterIt() throws Exception {
        publishedKeysAreFound(false, 100, 3000, ArenaSkipListTest::spreadKey);
    }

    /**
     * The hash index over many keys (it grows several times), keys removed by prefix and put again
     * (the new node takes the old one's slot), and keys that share one hash (their slots form one
     * probe chain, told apart by the key bytes).
     */
    @Test
    void theHashIndex_findsEveryKey_acrossGrowthRemovalsAndCollidingHashes() {
        ArenaSkipList list = new ArenaSkipList(true);
        int keys = 50_000;
        long seq = 0;
        for (int i = 0; i < keys; i++) {
            byte[] k = intKey(i);
            assertThat(list.put(k, BloomFilter.hash(k), ++seq, EntryType.PUT, intKey(-i))).isTrue();
        }
        for (int i = 0; i < keys; i += 7) {
            byte[] k = intKey(i); // an overwrite: found through the index, no new node
            assertThat(list.put(k, BloomFilter.hash(k), ++seq, EntryType.PUT, intKey(i))).isFalse();
        }
        // every key starting with 0x00 0x00 0x01: ids 256..511
        assertThat(list.removePrefix(new byte[] {0, 0, 1})).isEqualTo(256);
        for (int i = 256; i < 384; i++) {
            byte[] k = intKey(i);
            assertThat(list.put(k, BloomFilter.hash(k), ++seq, EntryType.PUT, intKey(i))).isTrue();
        }
        assertThat(list.indexBytes()).isGreaterThanOrEqualTo(keys * 8L * 4 / 3);
        for (int i = 0; i < keys; i++) {
            byte[] k = intKey(i);
            long n = list.findExactHashed(k, BloomFilter.hash(k));
            if (i >= 384 && i < 512) {
                assertThat(n == 0 || list.record(n) == ArenaSkipList.REMOVED)
                        .as("id %d", i)
                        .isTrue();
                continue;
            }
            assertThat(n).as("id %d", i).isNotZero();
            assertThat(list.key(n)).isEqualTo(k);
            boolean rewritten = i % 7 == 0 || (i >= 256 && i < 384);
            assertThat(list.value(list.record(n))).isEqualTo(intKey(rewritten ? i : -i));
        }
        // one hash for every key: a single probe chain
        ArenaSkipList colliding = new ArenaSkipList(true);
        for (int i = 0; i < 2000; i++) {
            colliding.put(intKey(i), 42L, i + 1, EntryType.PUT, intKey(i));
        }
        for (int i = 0; i < 2000; i++) {
            long n = colliding.findExactHashed(intKey(i), 42L);
            assertThat(colliding.value(colliding.record(n))).isEqualTo(intKey(i));
        }
        assertThat(colliding.findExactHashed(intKey(2000), 42L)).isZero();
    }

    /** As above, through the hash index, while it grows under the readers. */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aPublishedKey_isFoundThroughTheHashIndexByEverySearchThatStartsAfterIt() throws Exception {
        publishedKeysAreFound(true, 20, 20_000, ArenaSkipListTest::intKey);
    }

    /**
     * One writer puts {@code keys} keys (ids mapped by {@code keyOf}) per round while a reader
     * searches keys already published; every search must find its key.
     */
    private static void publishedKeysAreFound(
            boolean indexed, int rounds, int keys, IntFunction<byte[]> keyOf) throws Exception {
        for (int round = 0; round < rounds; round++) {
            ArenaSkipList list = new ArenaSkipList(indexed);
            AtomicInteger published = new AtomicInteger(-1);
            AtomicBoolean done = new AtomicBoolean();
            AtomicReference<String> failure = new AtomicReference<>();
            Thread reader =
                    new Thread(
                            () -> {
                                Random random = new Random();
                                while (!done.get()) {
                                    int p = published.get();
                                    if (p >= 0) {
                                        int id = random.nextInt(p + 1);
                                        byte[] key = keyOf.apply(id);
                                        long n =
                                                indexed
                                                        ? list.findExactHashed(
                                                                key, BloomFilter.hash(key))
                                                        : list.findExact(key, key.length);
                                        if (n == 0 || !Arrays.equals(list.key(n), key)) {
                                            failure.compareAndSet(
                                                    null, "key " + id + " of " + (p + 1));
                                        }
                                    }
                                }
                            });
            reader.start();
            for (int i = 0; i < keys; i++) {
                byte[] k = keyOf.apply(i);
                if (indexed) {
                    list.put(k, BloomFilter.hash(k), i + 1, EntryType.PUT, new byte[4]);
                } else {
                    list.put(k, i + 1, EntryType.PUT, new byte[4]);
                }
                published.set(i);
            }
            done.set(true);
            reader.join();
            assertThat(failure.get()).as("a published key not found").isNull();
        }
    }

    /** Keys of ids in 16 interleaved runs, so that new keys land between old ones. */
    private static byte[] spreadKey(int id) {
        return new byte[] {(byte) (id % 16), (byte) (id >>> 8), (byte) id};
    }

    private static void readOnce(ArenaSkipList list, Random random) {
        byte[] from = intKey(random.nextInt(50_000));
        byte[] previous = null;
        int steps = 0;
        for (long n = list.ceiling(from); n != 0 && steps < 500; n = list.next(n), steps++) {
            byte[] key = list.key(n);
            if (previous != null && Bytes.compare(previous, key) >= 0) {
                throw new AssertionError("scan out of order");
            }
            if (Bytes.compare(key, from) < 0) {
                throw new AssertionError("scan before its start");
            }
            previous = key;
            long record = list.record(n);
            if (record != ArenaSkipList.REMOVED) { // removed while the scan stood on it
                checkWhole(list, key, record);
            }
        }
        long n = list.findExact(from, from.length);
        if (n != 0) {
            long record = list.record(n);
            if (record != ArenaSkipList.REMOVED) {
                checkWhole(list, from, record);
            }
        }
    }

    private static void checkWhole(ArenaSkipList list, byte[] key, long record) {
        byte[] value = list.value(record);
        long seq = list.seq(record);
        if (list.type(record) != EntryType.PUT
                || !Arrays.equals(value, valueFor(key, seq, value.length - 12))) {
            throw new AssertionError("torn record for key " + Bytes.hex(key));
        }
    }

    /** key (4 bytes), seq (8 bytes), then {@code fill} bytes of the seq's low byte. */
    private static byte[] valueFor(byte[] key, long seq, int fill) {
        byte[] v = new byte[12 + fill];
        System.arraycopy(key, 0, v, 0, 4);
        for (int i = 0; i < 8; i++) {
            v[4 + i] = (byte) (seq >>> (56 - 8 * i));
        }
        Arrays.fill(v, 12, v.length, (byte) seq);
        return v;
    }

    /** A put through the hash index (with the key's hash) or without. */
    private static boolean put(
            ArenaSkipList list, boolean indexed, byte[] key, long seq, byte type, byte[] value) {
        return indexed
                ? list.put(key, BloomFilter.hash(key), seq, type, value)
                : list.put(key, seq, type, value);
    }

    private static byte[] intKey(int i) {
        return new byte[] {(byte) (i >>> 24), (byte) (i >>> 16), (byte) (i >>> 8), (byte) i};
    }

    private static void assertScanFrom(
            ArenaSkipList list, TreeMap<byte[], Entry> model, byte[] from) {
        long n = list.ceiling(from);
        for (Map.Entry<byte[], Entry> e : model.tailMap(from, true).entrySet()) {
            assertThat(n).isNotZero();
            assertThat(list.key(n)).isEqualTo(e.getKey());
            assertSame(list, list.record(n), e.getValue());
            n = list.next(n);
        }
        assertThat(n).isZero();
    }

    private static void assertSame(ArenaSkipList list, long record, Entry e) {
        assertThat(record).isNotEqualTo(ArenaSkipList.REMOVED);
        assertThat(list.seq(record)).isEqualTo(e.seq());
        assertThat(list.type(record)).isEqualTo(e.type());
        assertThat(list.value(record)).isEqualTo(e.value());
    }

    private static byte[] randomKey(Random random) {
        byte[] k = new byte[random.nextInt(4)];
        for (int i = 0; i < k.length; i++) {
            k[i] = (byte) random.nextInt(6); // few distinct keys: many rewrites and prefixes
        }
        return random.nextBoolean() ? k : Arrays.copyOf(k, k.length + 1);
    }

    private static final byte[][] WORD_PREFIXES = {
        {},
        {5},
        {5, 0, 0, 0, 0, 0, 0},
        {5, 0, 0, 0, 0, 0, 0, 0},
        {5, 0, 0, 0, 0, 0, 0, 0, -1},
        {5, -128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        {5, -128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 127},
        // whole words that differ in their first byte, above and below 127
        {-128, 0, 0, 0, 0, 0, 0, 0},
        {127, -1, -1, -1, -1, -1, -1, -1},
        {5, 0, 0, 0, 0, 0, 0, 0, -128, 0, 0, 0, 0, 0, 0, 0},
        {5, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0},
    };

    private static final byte[] UNSIGNED_EDGES = {0, 1, 127, -128, -1};

    /** One of a few prefixes of 0 to 17 bytes, then 0 to 4 bytes around the signed edges. */
    private static byte[] wordCrossingKey(Random random) {
        byte[] prefix = WORD_PREFIXES[random.nextInt(WORD_PREFIXES.length)];
        byte[] k = Arrays.copyOf(prefix, prefix.length + random.nextInt(5));
        for (int i = prefix.length; i < k.length; i++) {
            k[i] = UNSIGNED_EDGES[random.nextInt(UNSIGNED_EDGES.length)];
        }
        return k;
    }

    private static byte[] randomValue(Random random) {
        byte[] v = new byte[random.nextInt(3) == 0 ? random.nextInt(9000) : random.nextInt(20)];
        random.nextBytes(v);
        return v;
    }
}
