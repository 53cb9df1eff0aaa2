package io.github.flinkstate.lru.cow;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
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
    void evictsLeastRecentlyUsedAndWritesBackOnlyDirtyEntries() throws Exception {
        Recorder owner = new Recorder();
        CowLruMap map = new CowLruMap(2);
        map.insert(owner, "a", "ns", null, 0, 1, true);
        map.insert(owner, "b", "ns", null, 0, 2, false);
        map.get(owner, "a", "ns", null); // a is now most recent
        map.insert(owner, "c", "ns", null, 0, 3, true); // evicts b (clean)
        assertThat(owner.written).isEmpty();
        assertThat(map.peek(owner, "b", "ns", null)).isNull();
        map.insert(owner, "d", "ns", null, 0, 4, true); // evicts a (dirty)
        assertThat(owner.written).containsExactly("a");
        assertThat(map.evictions()).isEqualTo(2);
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
    void hitsInTheFrontQuarterDoNotRelink_butAnEntryNearTheTailIsPromotedAndNeverTheVictim()
            throws Exception {
        Recorder owner = new Recorder();
        CowLruMap map = new CowLruMap(100);
        for (int i = 0; i < 100; i++) {
            map.insert(owner, i, "ns", null, 0, i, false); // 99 in front, 0 at the tail
        }
        // 0 is the least recently used: its hit promotes it, so the next insert evicts 1
        map.get(owner, 0, "ns", null);
        map.insert(owner, 100, "ns", null, 0, 100, false);
        assertThat(map.peek(owner, 0, "ns", null)).isNotNull();
        assertThat(map.peek(owner, 1, "ns", null)).isNull();
        // hits on entries linked within the last 25 links leave the list as it is; they are in
        // the front quarter, and the inserts below evict the oldest entries, never them
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
            assertThat(map.peek(owner, i, "ns", null)).as("evicted in LRU order: %s", i).isNull();
        }
        for (int i = 80; i < 111; i++) {
            assertThat(map.peek(owner, i, "ns", null)).as("recently used: %s", i).isNotNull();
        }
        assertThat(map.evictions()).isEqualTo(11);
    }
}
