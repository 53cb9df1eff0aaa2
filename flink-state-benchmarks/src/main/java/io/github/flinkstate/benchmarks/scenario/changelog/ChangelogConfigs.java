package io.github.flinkstate.benchmarks.scenario.changelog;

import io.github.flinkstate.benchmarks.common.BackendSpec;
import io.github.flinkstate.changelog.DfsChangelogOptions;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import java.io.File;
import java.util.List;
import org.apache.flink.configuration.Configuration;

/**
 * The three configurations the changelog scenario compares: {@code rocksdb} (incremental RocksDB,
 * no changelog), {@code filesystem} (Flink's changelog backend over RocksDB with Flink's own DSTL)
 * and {@code dfs-batched} (the same with our DSTL). DSTL base paths and checkpoint storage are on
 * the slow {@code inject://} file system ({@link DfsLatency}). Stateless.
 */
public final class ChangelogConfigs {

    public static final List<String> NAMES = List.of("rocksdb", "filesystem", "dfs-batched");

    private ChangelogConfigs() {}

    /**
     * @param dstl the configuration's DSTL base directory (local; reached through {@code
     *     inject://})
     * @param checkpoints the configuration's checkpoint directory (same)
     */
    public static Configuration of(
            String name, File dstl, File checkpoints, String materializeInterval) {
        return of(name, dstl, checkpoints, materializeInterval, "");
    }

    /**
     * @param dstlOptions extra options of the {@code dfs-batched} configuration, {@code key=value}
     *     pairs separated by {@code ;} (e.g. to compare a setting across runs); empty for none
     */
    public static Configuration of(
            String name,
            File dstl,
            File checkpoints,
            String materializeInterval,
            String dstlOptions) {
        InjectingFileSystem fs = InjectingFileSystem.shared();
        Configuration config = new Configuration();
        switch (name) {
            case "rocksdb" -> BackendSpec.rocksDb().applyTo(config);
            case "filesystem" -> {
                BackendSpec.rocksDb().applyTo(config);
                config.setString("state.changelog.enabled", "true");
                config.setString("state.changelog.storage", "filesystem");
                config.setString("state.changelog.dstl.dfs.base-path", fs.uri(dstl));
            }
            case "dfs-batched" -> {
                BackendSpec.changelogOver(BackendSpec.rocksDb()).applyTo(config);
                config.set(DfsChangelogOptions.BASE_PATH, fs.uri(dstl));
                for (String option : dstlOptions.split(";")) {
                    if (!option.isBlank()) {
                        int eq = option.indexOf('=');
                        if (eq <= 0) {
                            throw new IllegalArgumentException(
                                    "--dstl-options wants key=value pairs, not " + option);
                        }
                        config.setString(
                                option.substring(0, eq).trim(), option.substring(eq + 1).trim());
                    }
                }
            }
            default -> throw new IllegalArgumentException("unknown configuration " + name);
        }
        config.setString("state.changelog.periodic-materialize.interval", materializeInterval);
        config.setString("execution.checkpointing.interval", "1 s");
        config.setString("execution.checkpointing.dir", fs.uri(checkpoints));
        config.setString(
                "execution.checkpointing.externalized-checkpoint-retention",
                "RETAIN_ON_CANCELLATION");
        // The run restores from the checkpoint the statistics name as the latest. Flink adds a
        // completed checkpoint to its store (subsuming older ones) before it reports it to the
        // statistics, so a checkpoint completing while the load job is cancelled can already have
        // deleted that one with a single retained checkpoint. Three leave room for that.
        config.setString("execution.checkpointing.num-retained", "3");
        config.setString("execution.checkpointing.tolerable-failed-checkpoints", "1000");
        config.setString("restart-strategy.type", "none");
        config.setString("web.checkpoints.history", "100000");
        config.setString("pipeline.object-reuse", "true");
        return config;
    }
}
