package io.github.flinkstate.lru.cow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * The slimmed entry: map entries carry the user key in a subclass, a map's null user key is held by
 * a plain entry, and the key group is stored in 16 bits.
 */
class CacheEntryTest {

    private static final CacheOwner OWNER = entry -> {};

    @Test
    void aNullUserKeyAndAUserKeyAreDifferentIdentities_evenThroughCopiesOnWrite() throws Exception {
        CowLruMap map = new CowLruMap(10);
        map.insert(OWNER, "k", "ns", null, 3, "whole", true);
        map.insert(OWNER, "k", "ns", "uk", 3, "one", true);
        CowSnapshot snapshot = map.snapshot();
        // writes during a snapshot copy the entries: the copies keep their kind and user key
        map.setValue(map.get(OWNER, "k", "ns", null), "whole2", true);
        map.setValue(map.get(OWNER, "k", "ns", "uk"), "one2", true);
        map.release(snapshot.version());

        CacheEntry plain = map.peek(OWNER, "k", "ns", null);
        CacheEntry withUserKey = map.peek(OWNER, "k", "ns", new String("uk"));
        assertThat(plain.value()).isEqualTo("whole2");
        assertThat(plain.userKey()).isNull();
        assertThat(withUserKey.value()).isEqualTo("one2");
        assertThat(withUserKey.userKey()).isEqualTo("uk");
        assertThat(withUserKey).isInstanceOf(MapCacheEntry.class);
        assertThat(plain).isNotInstanceOf(MapCacheEntry.class);
        assertThat(map.copiesOnWrite()).isEqualTo(2);
        map.checkInvariants();
    }

    @Test
    void everyKeyGroupFlinkAllowsIsKept_andLargerOnesAreRefused() throws Exception {
        CowLruMap map = new CowLruMap(10);
        int highest = (1 << 15) - 1; // Flink's maximum parallelism is 2^15
        map.insert(OWNER, "k", "ns", null, highest, "v", true);
        assertThat(map.peek(OWNER, "k", "ns", null).keyGroup()).isEqualTo(highest);
        assertThat(map.insert(OWNER, "j", "ns", "uk", 65_535, "v", true).keyGroup())
                .isEqualTo(65_535);
        assertThatThrownBy(() -> map.insert(OWNER, "x", "ns", null, 65_536, "v", true))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("65536");
        assertThatThrownBy(() -> map.insert(OWNER, "y", "ns", null, -1, "v", true))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
