package io.github.flinkstate.disagg.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.memtable.WriteBufferBudget;
import io.github.flinkstate.disagg.engine.testutil.LsmModelRunner;
import java.io.File;
import java.io.IOException;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Stores sharing one memtable budget (the keyed backends of a task slot): a store flushes early
 * while the budget is exceeded, so no memtable outgrows the budget however large the per-store
 * memtable size; every byte charged is given back by flushes and closes, and no data is lost.
 */
class LsmStoreWriteBudgetTest {

    private static final long BUDGET = 1 << 20;
    private static final int VALUE = 1000;
    private static final int KEYS = 4000; // about 4 MB per store

    @TempDir File tmp;

    private LsmOptions options(String dir, WriteBufferBudget budget) {
        return new LsmOptions(
                        FileSystem.getLocalFileSystem(),
                        new Path(new File(tmp, dir).toURI()),
                        KeyGroupSpan.of(0, 15))
                .memtableBytes(64L << 20) // never reached: the budget decides
                .writeBufferBudget(budget);
    }

    private static byte[] key(int id) {
        return LsmModelRunner.key(id % 16, 0, id);
    }

    private static byte[] value(int store, int id) {
        byte[] v = new byte[VALUE];
        Arrays.fill(v, (byte) (store * 31 + id));
        return v;
    }

    @Test
    void twoStoresOnOneBudget_flushEarly_giveEveryByteBack_andKeepTheirData() throws Exception {
        WriteBufferBudget budget = new WriteBufferBudget(BUDGET);
        try (LsmStore a = LsmStore.open(options("a", budget));
                LsmStore b = LsmStore.open(options("b", budget))) {
            for (int i = 0; i < KEYS; i++) {
                a.put(key(i), value(1, i));
                b.put(key(i), value(2, i));
                if (i % 2 == 0) {
                    a.append(key(i), value(3, i));
                    b.deletePrefix(key(i + 1));
                }
            }
            // each store alone wrote about 4 budgets' worth: both flushed several times, although
            // their own memtable limit (64 MiB) was never reached
            assertThat(a.stats().flushes()).isGreaterThanOrEqualTo(3);
            assertThat(b.stats().flushes()).isGreaterThanOrEqualTo(3);
            a.flush();
            b.flush();
            assertThat(a.chargedMemtableBytes()).isZero();
            assertThat(b.chargedMemtableBytes()).isZero();
            assertThat(budget.usedBytes()).as("flushed memtables give their bytes back").isZero();
            for (int i = 0; i < KEYS; i++) {
                assertThat(a.get(key(i))).isEqualTo(value(1, i));
                assertThat(b.get(key(i))).isEqualTo(value(2, i));
            }
            a.put(key(1), value(1, 1));
            assertThat(budget.usedBytes()).isEqualTo(a.chargedMemtableBytes()).isPositive();
        }
        assertThat(budget.usedBytes()).as("closing gives back what the memtables held").isZero();
    }

    @Test
    void aStoreAloneOnABudget_neverFillsAMemtableBeyondIt() throws Exception {
        WriteBufferBudget budget = new WriteBufferBudget(BUDGET);
        LsmOptions o = options("a", budget);
        long bound = (o.maxImmutableMemtables() + 1L) * (BUDGET + 2 * VALUE);
        try (LsmStore a = LsmStore.open(o)) {
            for (int i = 0; i < KEYS; i++) {
                a.put(key(i), value(1, i));
                // its own charge exceeding the budget rotates the memtable at the next write
                assertThat(a.chargedMemtableBytes()).isLessThanOrEqualTo(bound);
            }
            a.flush();
            assertThat(a.stats().flushes()).isGreaterThanOrEqualTo(KEYS * VALUE / BUDGET);
            assertThat(budget.usedBytes()).isZero();
        }
    }

    /**
     * Writes racing the close: a write's charge that found the store open but landed after the
     * close gave the store's bytes back stayed on the shared budget for good (found in a review;
     * the window is a few instructions wide: this stress test did not fail before the fix in the
     * run tried, so it guards the fix rather than proving the race).
     */
    @Test
    void writesRacingTheClose_leaveNothingOnTheBudget() throws Exception {
        WriteBufferBudget budget = new WriteBufferBudget(64L << 20);
        for (int round = 0; round < 200; round++) {
            LsmStore s = LsmStore.open(options("race-" + round, budget));
            CountDownLatch writing = new CountDownLatch(1);
            Thread writer =
                    new Thread(
                            () -> {
                                try {
                                    for (int i = 0; ; i++) {
                                        s.put(key(i), value(1, i));
                                        writing.countDown();
                                    }
                                } catch (IOException | RuntimeException closed) {
                                    // the store closed under the writer: expected
                                }
                            });
            writer.start();
            writing.await();
            s.close();
            writer.join(30_000);
            assertThat(writer.isAlive()).isFalse();
            assertThat(budget.usedBytes()).as("bytes left on the budget, round %d", round).isZero();
        }
    }

    @Test
    void storesWithoutABudget_chargeNothing() throws Exception {
        try (LsmStore a = LsmStore.open(options("a", null))) {
            a.put(key(1), value(1, 1));
            assertThat(a.chargedMemtableBytes()).isZero();
            assertThat(a.stats().flushes()).isZero();
        }
    }
}
