package io.github.flinkstate.disagg.engine.cache;

import java.io.File;

/**
 * Run in a second JVM by {@link CacheDirectoryLockTest}: deletes the abandoned cache directories
 * under {@code args[0]}, as another TaskManager starting on the same disk does, and prints how many
 * it deleted.
 */
public final class AbandonedDirectoryProbe {

    private AbandonedDirectoryProbe() {}

    public static void main(String[] args) {
        System.out.println("deleted=" + DiskCache.deleteAbandonedDirectories(new File(args[0])));
    }
}
