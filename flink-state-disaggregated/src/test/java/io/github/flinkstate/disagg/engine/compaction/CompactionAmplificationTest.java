package io.github.flinkstate.disagg.engine.compaction;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.LsmOptions;
import io.github.flinkstate.disagg.engine.LsmStore;
import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.disagg.engine.iterator.LsmIterator;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.testutil.LsmModelRunner;
import java.io.File;
import java.util.Arrays;
import java.util.Random;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Measures (in bytes and file counts, never time) the write and read amplification of the leveled
 * policy with an eager L0 trigger versus a lazy, tier-like one, on the same seeded update-heavy
 * workload. The figures are printed (see docs/disaggregated-engine.md); only correctness is
 * asserted.
 */
class CompactionAmplificationTest {

    @TempDir File tmp;

    @ParameterizedTest(name = "l0Trigger={0} multiplier={1}")
    @CsvSource({"4,10", "16,10", "4,4"})
    void updateHeavyWorkload_reportsAmplification(int l0Trigger, int multiplier) throws Exception {
        LsmOptions o =
                new LsmOptions(
                                FileSystem.getLocalFileSystem(),
                                new Path(tmp.toURI()),
                                KeyGroupSpan.of(0, 127))
                        .memtableBytes(64 * 1024)
                        .targetFileBytes(64 * 1024)
                        .levelBaseBytes(256 * 1024)
                        .levelMultiplier(multiplier)
                        .l0CompactionTrigger(l0Trigger)
                        .backgroundCompaction(false)
                        .blockCache(new BlockCache(4 << 20));
        Random rnd = new Random(2024);
        int keys = 20_000;
        long probes = 0;
        long probeSamples = 0;
        try (LsmStore store = LsmStore.open(o)) {
            for (int i = 0; i < 200_000; i++) {
                int k = rnd.nextInt(keys);
                byte[] v = new byte[16 + rnd.nextInt(48)];
                rnd.nextBytes(v);
                store.put(LsmModelRunner.key(k % 128, 0, k), v);
                if (i % 1000 == 999) {
                    store.compactUntilIdle();
                    int[] perLevel = store.filesPerLevel();
                    // files a point lookup may probe: every L0 file plus one per non-empty level
                    probes +=
                            perLevel[0]
                                    + Arrays.stream(perLevel, 1, perLevel.length)
                                            .filter(n -> n > 0)
                                            .count();
                    probeSamples++;
                }
            }
            store.flush();
            store.compactUntilIdle();
            store.checkInvariants();
            long live = 0;
            try (LsmIterator it = store.scanAll()) {
                while (it.isValid()) {
                    live++;
                    it.next();
                }
            }
            assertThat(live).isLessThanOrEqualTo(keys).isGreaterThan(keys / 2);
            System.out.printf(
                    "AMPLIFICATION l0Trigger=%d multiplier=%d: userBytes=%d flushBytes=%d "
                            + "compactionWritten=%d writeAmp(vs flush)=%.2f avgFilesProbedPerGet=%.2f shape=%s%n",
                    l0Trigger,
                    multiplier,
                    store.stats().userBytesWritten(),
                    store.stats().flushBytes(),
                    store.stats().compactionBytesWritten(),
                    store.stats().writeAmplification(),
                    (double) probes / probeSamples,
                    store.describe());
        }
    }
}
