package io.github.flinkstate.lru.cow;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The window rule of {@link ReadAdmission}. */
class ReadAdmissionTest {

    private static final int WINDOW = 1024; // max(maxEntries, 1024) for a small cache

    private static void reads(ReadAdmission a, int n, int hitEvery) {
        for (int i = 1; i <= n; i++) {
            a.record(hitEvery > 0 && i % hitEvery == 0);
        }
    }

    private static int admitted(ReadAdmission a, int misses) {
        int n = 0;
        for (int i = 0; i < misses; i++) {
            if (a.admit()) {
                n++;
            }
        }
        return n;
    }

    @Test
    void admitsEveryMiss_untilAWindowHardlyHits() {
        ReadAdmission a = new ReadAdmission(250);
        assertThat(admitted(a, 100)).isEqualTo(100);
        reads(a, WINDOW - 1, 0);
        assertThat(a.filtering()).isFalse(); // the window has not ended
        reads(a, 1, 0);
        assertThat(a.filtering()).isTrue();
        assertThat(admitted(a, 800)).isEqualTo(800 / ReadAdmission.SAMPLE);
    }

    @Test
    void aWindowWithOneHitInSixteen_staysPlainLru() {
        ReadAdmission a = new ReadAdmission(250);
        reads(a, WINDOW, 16);
        assertThat(a.filtering()).isFalse();
        reads(a, WINDOW, 17); // just below one in sixteen
        assertThat(a.filtering()).isTrue();
    }

    @Test
    void filtersForEightWindows_thenMeasuresPlainLruAgain() {
        ReadAdmission a = new ReadAdmission(250);
        reads(a, WINDOW, 0);
        for (int w = 0; w < ReadAdmission.FILTERING_WINDOWS; w++) {
            assertThat(a.filtering()).as("window %s", w).isTrue();
            reads(a, WINDOW, 2); // hits while filtering do not end it early
        }
        assertThat(a.filtering()).isFalse();
        reads(a, WINDOW, 2); // plain LRU hits now: stays
        assertThat(a.filtering()).isFalse();
    }

    @Test
    void theWindowIsAtLeastTheCacheSize() {
        ReadAdmission a = new ReadAdmission(5000);
        reads(a, 4999, 0);
        assertThat(a.filtering()).isFalse();
        reads(a, 1, 0);
        assertThat(a.filtering()).isTrue();
    }
}
