package io.github.flinkstate.disagg.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.testutil.LsmModelRunner;
import java.io.File;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Seeded randomized model tests of {@link LsmStore} on the local file system. */
class LsmStoreModelTest {

    private static final Logger LOG = LoggerFactory.getLogger(LsmStoreModelTest.class);

    @TempDir File tmp;

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 42})
    void singleStore_matchesTreeMap(long seed) throws Exception {
        LsmModelRunner r =
                new LsmModelRunner(FileSystem.getLocalFileSystem(), new Path(tmp.toURI()), seed);
        r.runSingleStore(40_000);
        assertThat(r.checks()).isGreaterThan(1000);
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {7, 8, 9})
    void rescale_mergeAndSplitWithClipping_matchesTreeMap(long seed) throws Exception {
        LsmModelRunner r =
                new LsmModelRunner(FileSystem.getLocalFileSystem(), new Path(tmp.toURI()), seed);
        r.runRescale(16_000);
    }

    @Test
    void randomSeed_matchesTreeMap() throws Exception {
        long seed = System.nanoTime();
        LOG.warn(
                "randomSeed_matchesTreeMap uses seed {} (rerun with this seed to reproduce)", seed);
        System.out.println("randomSeed_matchesTreeMap seed=" + seed);
        LsmModelRunner r =
                new LsmModelRunner(FileSystem.getLocalFileSystem(), new Path(tmp.toURI()), seed);
        r.runSingleStore(6_000);
        r = new LsmModelRunner(FileSystem.getLocalFileSystem(), new Path(tmp.toURI()), seed + 1);
        r.runRescale(3_000);
    }
}
