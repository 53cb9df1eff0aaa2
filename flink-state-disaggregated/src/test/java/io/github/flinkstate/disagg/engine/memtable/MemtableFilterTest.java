package io.github.flinkstate.disagg.engine.memtable;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.key.EntryType;
import io.github.flinkstate.disagg.engine.sst.BloomFilter;
import java.nio.ByteBuffer;
import java.util.function.ToIntFunction;
import org.junit.jupiter.api.Test;

/**
 * The memtable's filter ({@link MemtableFilter}) as seen through {@link Memtable}: no key or bloom
 * prefix written is ever filtered out, through rebuilds and prefix deletes; absent keys are mostly
 * filtered out; and the filter's size follows the keys held, not the writes made.
 */
class MemtableFilterTest {

    /** Keys are an 8-byte "list" prefix followed by a 4-byte element number. */
    private static final ToIntFunction<byte[]> PREFIX = k -> k.length >= 8 ? 8 : -1;

    private static byte[] key(long list, int element) {
        return ByteBuffer.allocate(12).putLong(list).putInt(element).array();
    }

    private static byte[] prefix(long list) {
        return ByteBuffer.allocate(8).putLong(list).array();
    }

    @Test
    void everyKeyAndPrefixWritten_passes_throughRebuildsAndPrefixDeletes() {
        Memtable m = new Memtable(1, PREFIX);
        long seq = 0;
        for (long list = 0; list < 20_000; list++) {
            m.add(
                    key(list, 0),
                    ++seq,
                    list % 7 == 0 ? EntryType.DELETE : EntryType.PUT,
                    new byte[1]);
            if (list % 3 == 0) {
                m.add(key(list, 1), ++seq, EntryType.PUT, new byte[1]);
            }
            if (list % 5 == 0) {
                m.deletePrefix(prefix(list), ++seq);
                m.add(key(list, 2), ++seq, EntryType.PUT, new byte[1]);
            }
        }
        m.checkInvariants(); // every key and bloom prefix in the map passes the filter
        for (long list = 0; list < 20_000; list++) {
            byte[] k = key(list, list % 5 == 0 ? 2 : 0);
            assertThat(m.get(k)).as("list %d", list).isNotNull();
            assertThat(m.get(k, BloomFilter.hash(k)).seq()).isEqualTo(m.get(k).seq());
            assertThat(m.mightContainPrefix(BloomFilter.hash(prefix(list)))).isTrue();
            if (list % 5 == 0) { // the prefix delete removed what the list held before it
                assertThat(m.get(key(list, 0))).isNull();
                assertThat(m.get(key(list, 1))).isNull();
            }
        }
    }

    @Test
    void prefixDeletes_removeWhatTheMemtableHolds_andOnlyThat() {
        Memtable m = new Memtable(1, PREFIX);
        long seq = 0;
        for (long list = 0; list < 5_000; list += 2) { // even lists only
            m.add(key(list, 0), ++seq, EntryType.PUT, new byte[1]);
            m.add(key(list, 1), ++seq, EntryType.PUT, new byte[1]);
        }
        for (long list = 0; list < 5_000; list++) { // odd ones are absent: the filter skips them
            m.deletePrefix(prefix(list), ++seq);
            m.add(key(list, 2), ++seq, EntryType.PUT, new byte[1]);
        }
        m.checkInvariants();
        for (long list = 0; list < 5_000; list++) {
            assertThat(m.get(key(list, 0))).isNull();
            assertThat(m.get(key(list, 1))).isNull();
            assertThat(m.get(key(list, 2))).isNotNull();
            assertThat(m.coveringTombstoneSeq(key(list, 0))).isPositive();
        }
        assertThat(m.entryCount()).isEqualTo(5_000);
    }

    @Test
    void absentKeysAndPrefixes_areMostlyFilteredOut() {
        Memtable m = new Memtable(1, PREFIX);
        long seq = 0;
        int lists = 50_000;
        for (long list = 0; list < lists; list++) {
            m.add(key(list, 0), ++seq, EntryType.PUT, new byte[8]);
        }
        int passedKeys = 0;
        int passedPrefixes = 0;
        int probes = 200_000;
        for (long list = lists; list < lists + probes; list++) {
            if (m.mightContainPrefix(BloomFilter.hash(prefix(list)))) {
                passedPrefixes++;
            }
            if (m.get(key(list - lists, 1)) != null) { // same lists, absent element
                passedKeys++;
            }
        }
        // 24 to 48 bits per hash, 3 bits in one 64-bit word: about 1% false positives
        assertThat((double) passedPrefixes / probes).isLessThan(0.03);
        assertThat(passedKeys).isZero(); // a false positive still finds no entry in the map
        m.checkInvariants();
    }

    @Test
    void filterTakesAtMostAFifthOfTheChargedBytes_evenForTheSmallestEntries() {
        Memtable m = new Memtable(1, PREFIX);
        long seq = 0;
        for (int i = 0; i < 300_000; i++) { // a 12-byte key without a value
            m.add(key(i, 0), ++seq, EntryType.DELETE, null);
            assertThat(m.filterBytes())
                    .isLessThanOrEqualTo(Math.max(8192, m.approximateBytes() / 5));
        }
        m.checkInvariants(); // the filter plus the arenas make up the charge
    }

    @Test
    void rewritingTheSameKeys_orListsClearedAndRefilled_doesNotGrowTheFilter() {
        Memtable m = new Memtable(1, PREFIX);
        long seq = 0;
        for (int i = 0; i < 200_000; i++) {
            m.add(key(i % 10, 0), ++seq, EntryType.PUT, new byte[4]); // value updates
            m.deletePrefix(prefix(100 + i % 10), ++seq); // list update: clear, then write anew
            m.add(key(100 + i % 10, i), ++seq, EntryType.PUT, new byte[4]);
        }
        assertThat(m.filterBytes()).isEqualTo(MemtableFilter.FIRST_WORDS * (long) Long.BYTES);
        m.checkInvariants();
        for (int list = 0; list < 10; list++) {
            assertThat(m.get(key(list, 0))).isNotNull();
        }
    }

    @Test
    void anEmptyMemtable_chargesNothing_andFiltersEverything() {
        Memtable m = new Memtable(1, PREFIX);
        assertThat(m.approximateBytes()).isZero();
        assertThat(m.get(key(1, 1))).isNull();
        assertThat(m.mightContainPrefix(BloomFilter.hash(prefix(1)))).isFalse();
        long delta = m.add(key(1, 1), 1, EntryType.PUT, new byte[0]);
        assertThat(delta).isEqualTo(m.approximateBytes()).isGreaterThan(m.filterBytes());
    }
}
