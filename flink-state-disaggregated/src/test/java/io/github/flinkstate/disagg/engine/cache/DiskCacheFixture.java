package io.github.flinkstate.disagg.engine.cache;

import java.io.File;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the tests of one {@link DiskCache} share: a temporary directory, the cache under test
 * (closed after each test), sizes and reproducible random contents.
 */
abstract class DiskCacheFixture {

    static final int KB = 1024;
    static final long MB = 1 << 20;

    @TempDir File tmp;

    /** The cache under test, if a test opened one; closed after each test. */
    DiskCache cache;

    @AfterEach
    void closeCache() {
        if (cache != null) {
            cache.close();
        }
    }

    /** {@code length} random bytes, the same for the same seed. */
    static byte[] randomBytes(int seed, int length) {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        return b;
    }
}
