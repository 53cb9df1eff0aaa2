package io.github.flinkstate.lru.cow;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Unit tests of LRU order, write-back on eviction and copy-on-write counting. */
class CowLruMapTest {

    private static final class Recorder implements CacheOwner {
        final List<Object> written = new ArrayList<>();

        @Override
        public void writeBack(CacheEntry entry) {
            written.add(entry.key());
        }
    }

    @Test
    void evictsUnusedEntriesFirstAndWritesBackOnlyDirtyEntries() throws Exception {
        Recorder owner = new Recorder();
        CowLruMap map = new CowLruMap(2);
        map.insert(owner, "a", "ns", null, 0, 1, true);
        map.insert(owner, "b", "ns", null, 0, 2, false);
        map.get(owner, "a", "ns", null); // a was used since it was linked
        map.insert(owner, "c", "ns", null, 0, 3, true); // a gets its second chance; evicts b
        assertThat(owner.written).isEmpty();
        assertThat(map.peek(owner, "b", "ns", null)).isNull();
        // a was relinked in front of c when b was evicted (second chance: relinked at the
        // eviction, not at its use), so c, unused, is now the oldest link
        map.insert(owner, "d", "ns", null, 0, 4, true); // evicts c (dirty)
        assertThat(owner.written).containsExactly("c");
        map.insert(owner, "e", "ns", null, 0, 5, true); // evicts a (dirty, unused since)
        assertThat(owner.written).containsExactly("c", "a");
        assertThat(map.evictions()).isEqualTo(3);
        map.checkInvariants();
    }

    @Test
    void writeDuringSnapshotCopiesEntryOncePerSnapshot() throws Exception {
        Recorder owner = new Recorder();
        CowLruMap map = new CowLruMap(100);
        for (int i = 0; i < 10; i++) {
            map.insert(owner, i, "ns", null, 0, i, true);
        }
        CowSnapshot snapshot = map.snapshot();
        assertThat(snapshot.bucketCount()).isEqualTo(map.bucketCount());
        long before = map.copiesOnWrite();
        CacheEntry e = map.get(owner, 5, "ns", null);
        e = map.setValue(e, 50, true);
        long afterFirst = map.copiesOnWrite();
        map.setValue(map.get(owner, 5, "ns", null), 51, true);
        assertThat(afterFirst).isGreaterThan(before);
        assertThat(map.copiesOnWrite()).isEqualTo(afterFirst); // second write: no new copy
        List<Object> seen = new ArrayList<>();
        snapshot.forEach(x -> seen.add(x.value()));
        assertThat(seen).contains(5).doesNotContain(50, 51);
        map.release(snapshot.version());
        long released = map.copiesOnWrite();
        map.setValue(map.get(owner, 6, "ns", null), 60, true);
        assertThat(map.copiesOnWrite()).isEqualTo(released);
        map.checkInvariants();
    }

    @Test
    void snapshotCopiesNoBucket_andAWriteCopiesOnlyItsSegmentOncePerSnapshot() throws Exception {
        Recorder owner = new Recorder();
        CowLruMap map = new CowLruMap(100_000);
        for (int i = 0; i < 20_000; i++) {
            map.insert(owner, i, "ns", null, 0, i, true);
        }
        int segments = map.bucketCount() / CowLruMap.SEGMENT_BUCKETS;
        assertThat(segments).isGreaterThan(1);

        CowSnapshot snapshot = map.snapshot();
        assertThat(map.segmentCopies()).isZero();
        // a new entry writes one bucket: its segment is copied once, the others stay shared
        map.insert(owner, -1, "ns", null, 0, -1, true);
        assertThat(map.segmentCopies()).isEqualTo(1);
        // removing entries rewrites bucket heads all over the table: one copy per segment at most
        for (int i = 0; i < 20_000; i += 2) {
            map.remove(map.peek(owner, i, "ns", null));
        }
        assertThat(map.segmentCopies()).isBetween(2L, (long) segments);
        long copies = map.segmentCopies();
        for (int i = 1; i < 20_000; i += 4) {
            map.remove(map.peek(owner, i, "ns", null));
        }
        assertThat(map.segmentCopies()).isEqualTo(copies);

        // the snapshot still holds exactly the 20,000 entries it saw
        Set<Object> seen = new HashSet<>();
        snapshot.forEach(e -> seen.add(e.key()));
        assertThat(seen).hasSize(20_000).doesNotContain(-1);
        assertThat(snapshot.size()).isEqualTo(20_000);
        map.release(snapshot.version());

        // no snapshot runs: writes copy nothing
        map.insert(owner, -2, "ns", null, 0, -2, true);
        map.remove(map.peek(owner, 3, "ns", null));
        assertThat(map.segmentCopies()).isEqualTo(copies);
        map.checkInvariants();
    }

    @Test
    void resizeDuringSnapshotLeavesTheSnapshotsSegmentsAlone() throws Exception {
        Recorder owner = new Recorder();
        CowLruMap map = new CowLruMap(100_000);
        for (int i = 0; i < 6_000; i++) {
            map.insert(owner, i, "ns", null, 0, i, true);
        }
        int bucketsBefore = map.bucketCount();
        CowSnapshot snapshot = map.snapshot();
        for (int i = 6_000; i < 30_000; i++) {
            map.insert(owner, i, "ns", null, 0, i, true); // grows the table twice at least
        }
        map.setValue(map.get(owner, 7, "ns", null), 700, true);
        assertThat(map.bucketCount()).isGreaterThanOrEqualTo(4 * bucketsBefore);
        assertThat(snapshot.bucketCount()).isEqualTo(bucketsBefore);
        Map<Object, Object> seen = new HashMap<>();
        snapshot.forEach(e -> seen.put(e.key(), e.value()));
        assertThat(seen).hasSize(6_000).containsEntry(7, 7);
        map.release(snapshot.version());
        map.checkInvariants();
        for (int i = 0; i < 30_000; i++) {
            assertThat(map.peek(owner, i, "ns", null).value()).isEqualTo(i == 7 ? 700 : i);
        }
    }

    @Test
    void usedEntriesGetASecondChance_andTheRestAreEvictedInLinkOrder() throws Exception {
        Recorder owner = new Recorder();
        CowLruMap map = new CowLruMap(100);
        for (int i = 0; i < 100; i++) {
            map.insert(owner, i, "ns", null, 0, i, false); // 99 in front, 0 at the tail
        }
        // 0 is the least recently linked but was used: the next insert evicts 1 instead
        map.get(owner, 0, "ns", null);
        map.insert(owner, 100, "ns", null, 0, 100, false);
        assertThat(map.peek(owner, 0, "ns", null)).isNotNull();
        assertThat(map.peek(owner, 1, "ns", null)).isNull();
        map.checkInvariants();
        // used entries survive the inserts below, which evict the oldest unused entries in order
        for (int round = 0; round < 3; round++) {
            for (int i = 80; i < 100; i++) {
                map.get(owner, i, "ns", null);
            }
        }
        for (int i = 101; i < 111; i++) {
            map.insert(owner, i, "ns", null, 0, i, false);
            map.checkInvariants();
        }
        for (int i = 2; i <= 11; i++) {
            assertThat(map.peek(owner, i, "ns", null)).as("evicted in link order: %s", i).isNull();
        }
        for (int i = 80; i < 111; i++) {
            assertThat(map.peek(owner, i, "ns", null)).as("recently used: %s", i).isNotNull();
        }
        assertThat(map.peek(owner, 0, "ns", null)).isNotNull();
        assertThat(map.evictions()).isEqualTo(11);
    }

    @Test
    void whenEveryEntryWasUsed_anInsertEvictsTheOldestAndKeepsTheNewEntry() throws Exception {
        Recorder owner = new Recorder();
        for (int capacity : new int[] {1, 2, 5}) {
            CowLruMap map = new CowLruMap(capacity);
            for (int i = 0; i < capacity; i++) {
                map.insert(owner, i, "ns", null, 0, i, true);
            }
            for (int i = capacity - 1; i >= 0; i--) {
                map.get(owner, i, "ns", null);
            }
            CacheEntry inserted = map.insert(owner, "new", "ns", null, 0, -1, true);
            map.checkInvariants();
            assertThat(map.size()).isEqualTo(capacity);
            assertThat(map.peek(owner, "new", "ns", null)).isSameAs(inserted);
            // every flag was cleared in one pass, so the oldest link (0) went first
            assertThat(map.peek(owner, 0, "ns", null)).isNull();
            assertThat(owner.written).last().isEqualTo(0);
        }
    }
}
