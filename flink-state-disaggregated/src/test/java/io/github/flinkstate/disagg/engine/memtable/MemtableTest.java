package io.github.flinkstate.disagg.engine.memtable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.disagg.engine.key.EntryType;
import io.github.flinkstate.disagg.engine.testutil.LsmModelRunner;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** Unit tests of {@link Memtable}, with invariants checked after every operation. */
class MemtableTest {

    @Test
    void putDeleteAndPrefixDelete_keepInvariants() {
        Memtable m = new Memtable(1);
        long seq = 0;
        for (int i = 0; i < 200; i++) {
            m.add(LsmModelRunner.key(i % 2, 0, i), ++seq, EntryType.PUT, new byte[i % 7]);
            m.checkInvariants();
        }
        m.add(LsmModelRunner.key(0, 0, 4), ++seq, EntryType.DELETE, null);
        m.checkInvariants();
        byte[] prefix = Arrays.copyOf(LsmModelRunner.key(1, 0, 1), 4);
        m.deletePrefix(prefix, ++seq);
        m.checkInvariants();
        assertThat(m.get(LsmModelRunner.key(1, 0, 11))).isNull();
        assertThat(m.coveringTombstoneSeq(LsmModelRunner.key(1, 0, 11))).isEqualTo(seq);
        assertThat(m.coveringTombstoneSeq(LsmModelRunner.key(1, 0, 21))).isZero();
        assertThat(m.get(LsmModelRunner.key(0, 0, 4)).type()).isEqualTo(EntryType.DELETE);
        m.add(LsmModelRunner.key(1, 0, 11), ++seq, EntryType.PUT, new byte[3]);
        m.checkInvariants();
        assertThat(m.get(LsmModelRunner.key(1, 0, 11)).seq()).isEqualTo(seq);
    }

    @Test
    void frozenMemtable_rejectsWrites() {
        Memtable m = new Memtable(1);
        m.add(LsmModelRunner.key(0, 0, 1), 1, EntryType.PUT, new byte[1]);
        m.freeze();
        assertThatThrownBy(() -> m.add(LsmModelRunner.key(0, 0, 2), 2, EntryType.PUT, new byte[1]))
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(
                        () ->
                                new Memtable(2)
                                        .add(
                                                LsmModelRunner.key(0, 0, 2),
                                                0,
                                                EntryType.PUT,
                                                new byte[1]))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
