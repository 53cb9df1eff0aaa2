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
}
