package io.github.flinkstate.disagg.engine.iterator;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.key.Bytes;
import io.github.flinkstate.disagg.engine.key.EntryType;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** {@link MergingIterator} against a sorted list of all its children's entries. */
class MergingIteratorTest {

    /** One entry; the value names its child and position, so a test sees which one came out. */
    private record Entry(byte[] key, long seq, byte[] value) {}

    private static final Comparator<Entry> ORDER =
            Comparator.<Entry, byte[]>comparing(Entry::key, Bytes::compare)
                    .thenComparing(Entry::seq, Comparator.reverseOrder());

    @Test
    void mergesChildren_byKeyThenNewestFirst_fromTheStartAndFromSeeksMidway() throws Exception {
        Random random = new Random(3);
        for (int round = 0; round < 300; round++) {
            int childCount = random.nextInt(7); // 0 to 6 children, some of them empty
            List<List<Entry>> children = new ArrayList<>();
            List<Entry> all = new ArrayList<>();
            long seq = 0;
            for (int c = 0; c < childCount; c++) {
                List<Entry> entries = new ArrayList<>();
                int n = random.nextInt(4) == 0 ? 0 : random.nextInt(40);
                for (int i = 0; i < n; i++) {
                    byte[] key = randomKey(random); // few keys: the same key in several children
                    entries.add(new Entry(key, ++seq, new byte[] {(byte) c, (byte) i}));
                }
                entries.sort(ORDER);
                children.add(entries);
                all.addAll(entries);
            }
            all.sort(ORDER);

            try (MergingIterator merged = new MergingIterator(iterators(children))) {
                merged.seekToFirst();
                assertYields(merged, all);
                for (int s = 0; s < 5; s++) {
                    // a few steps in first, so the seek starts from a partly drained heap
                    for (int step = random.nextInt(5); step > 0 && merged.valid(); step--) {
                        merged.next();
                    }
                    byte[] target = randomKey(random);
                    merged.seek(target);
                    assertYields(
                            merged,
                            all.stream().filter(e -> Bytes.compare(e.key(), target) >= 0).toList());
                    merged.seekToFirst();
                }
            }
        }
    }

    @Test
    void aChildWithALongRun_staysAtTheHeadUntilAnotherChildIsSmaller() throws Exception {
        List<Entry> run = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            run.add(new Entry(new byte[] {1, (byte) i}, 1000 - i, new byte[] {0}));
        }
        List<Entry> other =
                List.of(
                        new Entry(new byte[] {1, 50}, 2000, new byte[] {1}),
                        new Entry(new byte[] {2}, 1, new byte[] {1}));
        List<Entry> all = new ArrayList<>(run);
        all.addAll(other);
        all.sort(ORDER);
        try (MergingIterator merged = new MergingIterator(iterators(List.of(run, other)))) {
            merged.seekToFirst();
            assertYields(merged, all);
        }
    }

    private static void assertYields(MergingIterator merged, List<Entry> expected)
            throws Exception {
        for (Entry e : expected) {
            assertThat(merged.valid()).isTrue();
            assertThat(merged.key()).isEqualTo(e.key());
            assertThat(merged.seq()).isEqualTo(e.seq());
            assertThat(merged.type()).isEqualTo(EntryType.PUT);
            assertThat(merged.value()).isEqualTo(e.value());
            merged.next();
        }
        assertThat(merged.valid()).isFalse();
    }

    private static List<InternalIterator> iterators(List<List<Entry>> children) {
        List<InternalIterator> out = new ArrayList<>();
        children.forEach(c -> out.add(new ListIterator(c)));
        return out;
    }

    private static byte[] randomKey(Random random) {
        byte[] k = new byte[1 + random.nextInt(3)];
        for (int i = 0; i < k.length; i++) {
            k[i] = (byte) (random.nextInt(4) * 85); // 0, 85, 170, 255: signed and unsigned differ
        }
        return k;
    }

    /**
     * A child over a sorted list; {@code key()} returns a fresh copy each call, as a memtable's
     * cursor does.
     */
    private static final class ListIterator implements InternalIterator {
        private final List<Entry> entries;
        private int at;

        ListIterator(List<Entry> entries) {
            this.entries = entries;
            this.at = entries.size();
        }

        @Override
        public void seek(byte[] target) {
            at = 0;
            while (at < entries.size() && Bytes.compare(entries.get(at).key(), target) < 0) {
                at++;
            }
        }

        @Override
        public void seekToFirst() {
            at = 0;
        }

        @Override
        public boolean valid() {
            return at < entries.size();
        }

        @Override
        public void next() {
            at++;
        }

        @Override
        public byte[] key() {
            return entries.get(at).key().clone();
        }

        @Override
        public long seq() {
            return entries.get(at).seq();
        }

        @Override
        public byte type() {
            return EntryType.PUT;
        }

        @Override
        public byte[] value() {
            return entries.get(at).value();
        }
    }
}
