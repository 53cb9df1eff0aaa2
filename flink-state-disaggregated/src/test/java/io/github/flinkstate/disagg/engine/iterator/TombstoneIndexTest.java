package io.github.flinkstate.disagg.engine.iterator;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.key.KeyRange;
import io.github.flinkstate.disagg.engine.sst.PrefixTombstone;
import io.github.flinkstate.disagg.engine.sst.PrefixTombstones;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link TombstoneIndex} and the per-file {@link PrefixTombstones} it is made of, against a model
 * that checks every tombstone of every file: prefixes of several lengths (some prefixes of others,
 * repeated with several sequence numbers), files in overlapping and sorted runs, keys inside and
 * outside the files' scopes.
 */
class TombstoneIndexTest {

    private record ModelFile(List<PrefixTombstone> tombstones, KeyRange scope) {}

    @Test
    void lookups_matchAModelThatChecksEveryTombstone() {
        Random rnd = new Random(7);
        for (int round = 0; round < 200; round++) {
            List<ModelFile> model = new ArrayList<>();
            TombstoneIndex.Builder b = new TombstoneIndex.Builder();
            // an overlapping run: scopes anywhere
            List<ModelFile> overlapping = new ArrayList<>();
            for (int i = rnd.nextInt(4); i > 0; i--) {
                overlapping.add(file(rnd, randomKey(rnd, 1), randomKey(rnd, 1)));
            }
            add(b, overlapping, false);
            model.addAll(overlapping);
            // two sorted runs: consecutive scopes [4i, 4i + 3), some with gaps, some files empty
            for (int run = 0; run < 2; run++) {
                List<ModelFile> sorted = new ArrayList<>();
                for (int i = 0; i < 8; i++) {
                    if (rnd.nextInt(3) > 0) {
                        byte lo = (byte) (i * 4 + run);
                        sorted.add(file(rnd, new byte[] {lo}, new byte[] {(byte) (lo + 3)}));
                    }
                }
                add(b, sorted, true);
                model.addAll(sorted);
            }
            TombstoneIndex index = b.build();
            for (int probe = 0; probe < 300; probe++) {
                byte[] key = randomKey(rnd, 1 + rnd.nextInt(4));
                long expected = 0;
                for (ModelFile f : model) {
                    if (f.scope.contains(key)) {
                        for (PrefixTombstone t : f.tombstones) {
                            if (startsWith(key, t.prefix())) {
                                expected = Math.max(expected, t.seq());
                            }
                        }
                    }
                }
                assertThat(index.coveringSeq(key))
                        .as("key %s", Arrays.toString(key))
                        .isEqualTo(expected);
                long above = rnd.nextInt(60);
                long pruned = index.coveringSeq(key, above);
                assertThat(pruned > above).isEqualTo(expected > above);
                if (expected > above) {
                    assertThat(pruned).isEqualTo(expected);
                }
            }
        }
    }

    @Test
    void aFileWithManyTombstones_findsEachByItsPrefixOnly() {
        List<PrefixTombstone> list = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            list.add(new PrefixTombstone(new byte[] {0, (byte) (i >> 8), (byte) i}, i + 1));
        }
        PrefixTombstones set = PrefixTombstones.of(list);
        assertThat(set.maxSeq()).isEqualTo(10_000);
        for (int i = 0; i < 10_000; i++) {
            byte[] key = {0, (byte) (i >> 8), (byte) i, 42};
            assertThat(set.coveringSeq(key)).isEqualTo(i + 1);
        }
        assertThat(set.coveringSeq(new byte[] {0, 0})).isZero(); // shorter than every prefix
        assertThat(set.coveringSeq(new byte[] {1, 0, 0, 0})).isZero();
        assertThat(PrefixTombstones.EMPTY.coveringSeq(new byte[] {0, 0, 0})).isZero();
    }

    @Test
    void filesWithoutTombstones_leaveTheIndexEmpty() {
        TombstoneIndex index =
                new TombstoneIndex.Builder()
                        .addOverlapping(
                                List.of(PrefixTombstones.EMPTY),
                                List.of(new KeyRange(new byte[] {0}, null)))
                        .addSorted(List.of(), List.of())
                        .build();
        assertThat(index.isEmpty()).isTrue();
        assertThat(index.coveringSeq(new byte[] {0, 1})).isZero();
    }

    private static void add(TombstoneIndex.Builder b, List<ModelFile> files, boolean sorted) {
        List<PrefixTombstones> sets = new ArrayList<>();
        List<KeyRange> scopes = new ArrayList<>();
        for (ModelFile f : files) {
            sets.add(PrefixTombstones.of(f.tombstones));
            scopes.add(f.scope);
        }
        if (sorted) {
            b.addSorted(sets, scopes);
        } else {
            b.addOverlapping(sets, scopes);
        }
    }

    /** A file with up to 12 tombstones of 1-3 bytes over a 4-value alphabet, scope [lo, hi). */
    private static ModelFile file(Random rnd, byte[] lo, byte[] hi) {
        if (Arrays.compareUnsigned(lo, hi) > 0) {
            byte[] t = lo;
            lo = hi;
            hi = t;
        }
        List<PrefixTombstone> tombstones = new ArrayList<>();
        for (int i = rnd.nextInt(13); i > 0; i--) {
            tombstones.add(
                    new PrefixTombstone(randomKey(rnd, 1 + rnd.nextInt(3)), 1 + rnd.nextInt(100)));
        }
        return new ModelFile(tombstones, new KeyRange(lo, hi));
    }

    /** Keys over a small alphabet (first byte 0-33, then 0-3), so that prefixes collide often. */
    private static byte[] randomKey(Random rnd, int length) {
        byte[] k = new byte[length];
        k[0] = (byte) rnd.nextInt(34);
        for (int i = 1; i < length; i++) {
            k[i] = (byte) rnd.nextInt(4);
        }
        return k;
    }

    private static boolean startsWith(byte[] key, byte[] prefix) {
        return key.length >= prefix.length
                && Arrays.equals(key, 0, prefix.length, prefix, 0, prefix.length);
    }
}
