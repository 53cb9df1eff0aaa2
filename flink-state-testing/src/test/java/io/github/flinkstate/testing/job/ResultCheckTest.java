package io.github.flinkstate.testing.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** Each kind of error of {@link ResultCheck} is found and reported separately. */
class ResultCheckTest {

    private static final long RECORDS = 1000;
    private final Map<Long, KeySummary> expected =
            ExpectedResults.compute(RECORDS, KeyFunction.modulo(10));

    private Map<Long, Set<KeySummary>> exactReports() {
        Map<Long, Set<KeySummary>> actual = new HashMap<>();
        expected.forEach((k, v) -> actual.put(k, Set.of(v)));
        return actual;
    }

    private static KeySummary withCount(KeySummary s, long count) {
        return new KeySummary(s.key(), count, s.sum(), s.max(), s.sampled(), s.residues());
    }

    @Test
    void expected_isComputedFromTheInput() {
        assertThat(expected).hasSize(10);
        KeySummary k3 = expected.get(3L);
        assertThat(k3.count()).isEqualTo(100);
        assertThat(k3.sum()).isEqualTo(100 * 3 + 10 * (99 * 100 / 2));
        long max = Long.MIN_VALUE;
        TreeMap<Long, Long> residues = new TreeMap<>();
        for (long x = 3; x < 1000; x += 10) {
            max = Math.max(max, StateKeepingFunction.maxInput(x));
            residues.merge(StateKeepingFunction.mapKey(x), 1L, Long::sum);
        }
        assertThat(k3.max()).isEqualTo(max);
        assertThat(k3.residues()).isEqualTo(residues).hasSize(4);
        assertThat(k3.sampled()).isSorted().allMatch(x -> x % 10 == 3);
        long sampled = expected.values().stream().mapToLong(s -> s.sampled().size()).sum();
        assertThat(sampled).isBetween(10L, 70L); // about 1 in 32 of 1000
    }

    /**
     * Every key's map state holds several entries and its maximum is not its last record, whatever
     * the key function: with the map key {@code record % 4} and keys {@code record % K}, K a
     * multiple of 4 (as most tests use), every key had one map entry, and a map state that kept
     * only its last user key passed; and the maximum of a key's records is its last one, which a
     * state that lost its accumulator reports too. Found in a review.
     */
    @Test
    void everyKeyHasSeveralMapEntries_andAMaximumThatIsNotItsLastRecord() {
        Map<Long, KeySummary> byModulo700 =
                ExpectedResults.compute(60_000, KeyFunction.modulo(700));
        assertThat(byModulo700.values()).allMatch(s -> s.residues().size() > 1);
        assertThat(byModulo700.values())
                .filteredOn(s -> s.max() != StateKeepingFunction.maxInput(lastRecord(s.key())))
                .hasSizeGreaterThan(600);
    }

    /** The last of records 0..59,999 with {@code record % 700 == key}. */
    private static long lastRecord(long key) {
        return key + 700 * ((60_000 - 1 - key) / 700);
    }

    @Test
    void exactReports_areExact_replayedIdenticalReportsToo() {
        ResultCheck check = ResultCheck.compare(expected, exactReports());
        assertThat(check.isExact()).isTrue();
        assertThat(check.verdict()).isEqualTo("yes");
        check.assertExact();
    }

    @Test
    void eachKindOfErrorIsReported() {
        Map<Long, Set<KeySummary>> actual = exactReports();
        actual.remove(0L); // missing
        actual.put(42L, Set.of(withCount(expected.get(1L), 1))); // unexpected
        actual.put(1L, Set.of(withCount(expected.get(1L), 99))); // lost
        actual.put(2L, Set.of(withCount(expected.get(2L), 101))); // duplicated
        KeySummary s4 = expected.get(4L);
        actual.put(
                4L,
                Set.of(
                        new KeySummary(
                                4L,
                                s4.count(),
                                s4.sum() + 1,
                                s4.max(),
                                s4.sampled(),
                                s4.residues()))); // wrong
        KeySummary s5 = expected.get(5L);
        actual.put(
                5L,
                Set.of(
                        s5,
                        new KeySummary(
                                5L, s5.count(), s5.sum(), s5.max(), List.of(), new TreeMap<>())));

        ResultCheck check = ResultCheck.compare(expected, actual);
        assertThat(check.isExact()).isFalse();
        assertThat(check.missingKeys()).containsExactly(0L);
        assertThat(check.unexpectedKeys()).containsExactly(42L);
        assertThat(check.duplicateKeys()).containsExactly(5L);
        assertThat(check.wrongKeys()).isEqualTo(3);
        assertThat(check.verdict())
                .contains("1 missing")
                .contains("1 unexpected")
                .contains("1 with lost records")
                .contains("1 with duplicated records")
                .contains("1 with wrong state")
                .contains("1 finalized twice");
        assertThatThrownBy(check::assertExact)
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("missing keys (1): [0]");
    }
}
