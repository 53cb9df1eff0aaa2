package io.github.flinkstate.benchmarks.scenario.remote;

import io.github.flinkstate.benchmarks.common.BackendSpec;
import io.github.flinkstate.disagg.DisaggregatedOptions;
import java.io.File;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;

/**
 * One backend configuration the remote read scenario measures: ours ({@code disaggregated}) or
 * ForSt ({@code forst}) with its primary directory on the remote file system and a local disk cache
 * of {@code cachePercent} of the state, or RocksDB ({@code rocksdb}) with everything on local disk
 * (its checkpoint on the remote file system; {@code cachePercent} is ignored). Immutable.
 *
 * <p>Both disaggregated backends restore in CLAIM mode (ForSt reuses the checkpoint's files in
 * place only then; in NO_CLAIM mode it copies them all first). ForSt uses its file cache ({@code
 * state.backend.forst.cache.size-based-limit}); ours its disk tier ({@code
 * state.backend.disaggregated.local-cache.size}) with the warm-up after a restore, its whole-file
 * copies memory-mapped unless {@code localCacheMmap} is false, its checkpoints recording the cache
 * hint for the warm-up unless {@code warmUpHint} is false; both keep their default free-space
 * reserve (256 MiB).
 */
public record RemoteReadTarget(
        String backend, int cachePercent, boolean localCacheMmap, boolean warmUpHint) {

    /** A target with our backend's defaults: mapped whole-file copies, the cache hint on. */
    public RemoteReadTarget(String backend, int cachePercent) {
        this(backend, cachePercent, true, true);
    }

    public RemoteReadTarget {
        if (!backend.equals("disaggregated")
                && !backend.equals("forst")
                && !backend.equals("rocksdb")) {
            throw new IllegalArgumentException(
                    "backend must be disaggregated, forst or rocksdb, was '" + backend + "'");
        }
        if (cachePercent < 0) {
            throw new IllegalArgumentException("cache percent must be >= 0: " + cachePercent);
        }
    }

    /**
     * The row label, e.g. {@code forst 10%}, {@code disaggregated 100% (no mmap)}, {@code
     * disaggregated 50% (no hint)} or {@code rocksdb (all local)}.
     */
    public String label() {
        return backend.equals("rocksdb")
                ? "rocksdb (all local)"
                : backend
                        + " "
                        + cachePercent
                        + "%"
                        + (backend.equals("disaggregated") && !localCacheMmap ? " (no mmap)" : "")
                        + (backend.equals("disaggregated") && !warmUpHint ? " (no hint)" : "");
    }

    /**
     * The backend's configuration.
     *
     * @param stateBytes size of the state the cache budget is a share of
     * @param localDir local working directory of this backend instance
     * @param managedMemoryBytes the task's managed memory (sizes our block cache)
     */
    public Configuration configuration(long stateBytes, File localDir, long managedMemoryBytes) {
        Configuration c = new Configuration();
        c.setString("execution.state-recovery.claim-mode", "CLAIM");
        long cacheBytes = Math.max(1L << 20, stateBytes * cachePercent / 100);
        switch (backend) {
            case "disaggregated":
                BackendSpec.disaggregated().applyTo(c);
                c.set(DisaggregatedOptions.LOCAL_DIRECTORY, localDir.getAbsolutePath());
                c.set(DisaggregatedOptions.LOCAL_CACHE_MMAP, localCacheMmap);
                c.set(DisaggregatedOptions.LOCAL_CACHE_WARM_UP_HINT, warmUpHint);
                c.set(
                        DisaggregatedOptions.BLOCK_CACHE_SIZE,
                        new MemorySize(managedMemoryBytes * 3 / 4));
                c.set(
                        DisaggregatedOptions.LOCAL_CACHE_SIZE,
                        new MemorySize(cachePercent == 0 ? 0 : cacheBytes));
                break;
            case "forst":
                BackendSpec.forSt().applyTo(c);
                c.setString("state.backend.forst.local-dir", localDir.getAbsolutePath());
                if (cachePercent > 0) {
                    c.setString(
                            "state.backend.forst.cache.dir",
                            new File(localDir, "forst-cache").getAbsolutePath());
                    c.setString(
                            "state.backend.forst.cache.size-based-limit", cacheBytes + " bytes");
                } else {
                    c.setString("state.backend.forst.cache.reserve-size", "0 bytes");
                }
                break;
            default:
                BackendSpec.rocksDb().applyTo(c);
                c.setString("state.backend.rocksdb.localdir", localDir.getAbsolutePath());
        }
        return c;
    }
}
