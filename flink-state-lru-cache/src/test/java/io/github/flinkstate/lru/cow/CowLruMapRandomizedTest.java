package io.github.flinkstate.lru.cow;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.flink.api.common.typeutils.base.array.IntPrimitiveArraySerializer;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Seeded random operations on {@link CowLruMap} against a plain {@link HashMap} model: writes,
 * in-place mutation of values, deletes and evictions, while several snapshots are taken, kept open
 * across further writes, read, and released in random order. Checks after every step: structural
 * invariants, that the cache overlaid on the write-back target equals the model, and that every
 * snapshot still shows exactly what the cache held when it was taken.
 */
class CowLruMapRandomizedTest {

    private static final Logger LOG = LoggerFactory.getLogger(CowLruMapRandomizedTest.class);
    private static final Object NS = "ns";

    /** The "delegate": receives write-backs of evicted dirty entries. */
    private static final class Target implements CacheOwner {
        final Map<Integer, int[]> stored = new HashMap<>();
        int writeBacks;

        /** Dirty live entries as told by the map's callbacks. */
        int dirtyByCallbacks;

        @Override
        public void onDirtyChanged(CacheEntry entry, boolean dirty) {
            dirtyByCallbacks += dirty ? 1 : -1;
        }

        @Override
        public void onRemoved(CacheEntry entry) {
            if (entry.isDirty()) {
                dirtyByCallbacks--;
            }
        }

        @Override
        public void writeBack(CacheEntry entry) {
            writeBacks++;
            if (entry.isAbsent()) {
                stored.remove((Integer) entry.key());
            } else {
                stored.put((Integer) entry.key(), ((int[]) entry.value()).clone());
            }
        }
    }

    private static final class OpenSnapshot {
        final CowSnapshot snapshot;
        final Map<Integer, String> expected;

        OpenSnapshot(CowSnapshot snapshot, Map<Integer, String> expected) {
            this.snapshot = snapshot;
            this.expected = expected;
        }
    }

    @Test
    void randomOperationsMatchModelWithConcurrentSnapshots() throws Exception {
        for (int round = 0; round < 20; round++) {
            long seed = System.nanoTime() + round;
            try {
                runRound(seed, 1 + new Random(seed).nextInt(64));
            } catch (AssertionError | RuntimeException e) {
                throw new AssertionError("failed with seed " + seed, e);
            }
        }
    }

    @Test
    void tinyCacheEvictsOnEveryInsert() throws Exception {
        runRound(42L, 1);
    }

    /**
     * A table of several bucket segments (12,285 entries first: 16,384 buckets, 4 segments, just
     * below the resize threshold), which grows to 32,768 buckets while snapshots are open, so that
     * segment copies, resizes under a snapshot and chains across segment copies are all exercised.
     * Fewer steps than the small rounds: every step checks the whole map.
     */
    @Test
    void tableOfSeveralSegmentsGrowsWhileSnapshotsAreOpen() throws Exception {
        long seed = System.nanoTime();
        try {
            CowLruMap map = runRound(seed, 20_000, 14_000, 12_285, 600);
            assertThat(map.bucketCount()).isEqualTo(32_768);
        } catch (AssertionError | RuntimeException e) {
            throw new AssertionError("failed with seed " + seed, e);
        }
    }

    private void runRound(long seed, int maxEntries) throws Exception {
        runRound(seed, maxEntries, 1 + new Random(seed ^ 0x5DEECE66DL).nextInt(200), 0, 3000);
    }

    /** Runs random steps over keys {@code [0, keySpace)}, the first {@code prefill} cached. */
    private CowLruMap runRound(long seed, int maxEntries, int keySpace, int prefill, int steps)
            throws Exception {
        LOG.info("seed {} maxEntries {} keySpace {}", seed, maxEntries, keySpace);
        Random random = new Random(seed);
        IntPrimitiveArraySerializer serializer = IntPrimitiveArraySerializer.INSTANCE;
        Target target = new Target();
        CowLruMap map = new CowLruMap(maxEntries);
        Map<Integer, int[]> model = new HashMap<>();
        Deque<OpenSnapshot> open = new ArrayDeque<>();
        for (int key = 0; key < prefill; key++) {
            int[] value = {key, -1};
            map.insert(target, key, NS, null, 0, value, true);
            model.put(key, value.clone());
        }

        for (int step = 0; step < steps; step++) {
            int key = random.nextInt(keySpace);
            int op = random.nextInt(100);
            if (op < 35) {
                // put a new value
                int[] value = {random.nextInt(1000), step};
                CacheEntry e = map.get(target, key, NS, null);
                if (e != null) {
                    map.setValue(e, value, true);
                } else {
                    map.insert(target, key, NS, null, 0, value, true);
                }
                model.put(key, value.clone());
            } else if (op < 55) {
                // read, loading on a miss, then mutate the value in place (like ListState.add)
                CacheEntry e = readThrough(map, target, key);
                if (!e.isAbsent()) {
                    @SuppressWarnings("unchecked")
                    CacheEntry p =
                            map.privateValue(
                                    e,
                                    (org.apache.flink.api.common.typeutils.TypeSerializer<Object>)
                                            (Object) serializer);
                    ((int[]) p.value())[0]++;
                    map.setValue(p, p.value(), true);
                    model.get(key)[0]++;
                }
            } else if (op < 70) {
                // delete
                CacheEntry e = map.get(target, key, NS, null);
                if (e != null) {
                    map.setValue(e, CacheEntry.ABSENT, true);
                } else {
                    target.stored.remove(key);
                }
                model.remove(key);
            } else if (op < 80) {
                // flush one dirty entry and mark it clean
                List<CacheEntry> dirty = map.liveEntries(CacheEntry::isDirty);
                if (!dirty.isEmpty()) {
                    CacheEntry e = map.findLive(dirty.get(random.nextInt(dirty.size())));
                    target.writeBack(e);
                    map.markClean(e);
                }
            } else if (op < 88) {
                open.addLast(new OpenSnapshot(map.snapshot(), describe(map)));
            } else if (op < 96 && !open.isEmpty()) {
                OpenSnapshot s = random.nextBoolean() ? open.pollFirst() : open.pollLast();
                verifySnapshot(s);
                map.release(s.snapshot.version());
            } else {
                // a read of a key that may be uncached
                CacheEntry e = readThrough(map, target, key);
                assertThat(e.isAbsent()).isEqualTo(!model.containsKey(key));
            }
            map.checkInvariants();
            assertThat(target.dirtyByCallbacks)
                    .as("dirty transitions reported to the owner add up")
                    .isEqualTo(map.liveEntries(CacheEntry::isDirty).size());
            assertOverlayEqualsModel(map, target, model);
            for (OpenSnapshot s : open) {
                if (random.nextInt(50) == 0) {
                    verifySnapshot(s);
                }
            }
        }
        while (!open.isEmpty()) {
            OpenSnapshot s = open.poll();
            verifySnapshot(s);
            map.release(s.snapshot.version());
        }
        assertThat(map.runningSnapshots()).isZero();
        if (maxEntries < keySpace) {
            assertThat(map.evictions()).isPositive();
        }
        return map;
    }

    private static CacheEntry readThrough(CowLruMap map, Target target, int key) throws Exception {
        CacheEntry e = map.get(target, key, NS, null);
        if (e == null) {
            int[] stored = target.stored.get(key);
            e =
                    map.insert(
                            target,
                            key,
                            NS,
                            null,
                            0,
                            stored == null ? CacheEntry.ABSENT : stored.clone(),
                            false);
        }
        return e;
    }

    /** Cache content as text per key: value and dirty flag (values are copied into the text). */
    private static Map<Integer, String> describe(CowLruMap map) {
        Map<Integer, String> d = new HashMap<>();
        for (CacheEntry e : map.liveEntries(x -> true)) {
            d.put((Integer) e.key(), text(e));
        }
        return d;
    }

    private static String text(CacheEntry e) {
        return (e.isAbsent() ? "ABSENT" : Arrays.toString((int[]) e.value()))
                + (e.isDirty() ? "*" : "");
    }

    private static void verifySnapshot(OpenSnapshot s) {
        Map<Integer, String> actual = new HashMap<>();
        s.snapshot.forEach(e -> actual.put((Integer) e.key(), text(e)));
        assertThat(actual).isEqualTo(s.expected);
    }

    private static void assertOverlayEqualsModel(
            CowLruMap map, Target target, Map<Integer, int[]> model) {
        Map<Integer, List<Integer>> overlay = new HashMap<>();
        target.stored.forEach((k, v) -> overlay.put(k, toList(v)));
        for (CacheEntry e : map.liveEntries(x -> true)) {
            if (e.isAbsent()) {
                overlay.remove((Integer) e.key());
            } else {
                overlay.put((Integer) e.key(), toList((int[]) e.value()));
            }
            if (!e.isDirty()) {
                int[] stored = target.stored.get((Integer) e.key());
                assertThat(stored == null ? null : toList(stored))
                        .as("clean entry equals the target for key %s", e.key())
                        .isEqualTo(e.isAbsent() ? null : toList((int[]) e.value()));
            }
        }
        Map<Integer, List<Integer>> expected = new HashMap<>();
        model.forEach((k, v) -> expected.put(k, toList(v)));
        assertThat(overlay).isEqualTo(expected);
    }

    private static List<Integer> toList(int[] values) {
        List<Integer> list = new ArrayList<>(values.length);
        for (int v : values) {
            list.add(v);
        }
        return list;
    }
}
