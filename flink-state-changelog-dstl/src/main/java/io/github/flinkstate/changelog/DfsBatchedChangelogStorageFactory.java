package io.github.flinkstate.changelog;

import io.github.flinkstate.changelog.read.DfsChangelogStorageView;
import java.io.File;
import java.io.IOException;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ConfigurationUtils;
import org.apache.flink.runtime.metrics.groups.TaskManagerJobMetricGroup;
import org.apache.flink.runtime.state.LocalRecoveryConfig;
import org.apache.flink.runtime.state.changelog.StateChangelogStorageFactory;

/**
 * Registers the {@code dfs-batched} DSTL with Flink through {@code
 * META-INF/services/org.apache.flink.runtime.state.changelog.StateChangelogStorageFactory}.
 * Selected by {@code state.changelog.storage: dfs-batched} in the TaskManager configuration; on
 * restore, Flink finds it by the identifier recorded in every {@code
 * ChangelogStateHandleStreamImpl} this storage produced.
 *
 * <p>Thread safety: stateless.
 */
public final class DfsBatchedChangelogStorageFactory implements StateChangelogStorageFactory {

    /** Persisted in checkpoint metadata: never change it. Lower case (Flink looks it up as is). */
    public static final String IDENTIFIER = "dfs-batched";

    @Override
    public String getIdentifier() {
        return IDENTIFIER;
    }

    @Override
    public DfsBatchedChangelogStorage createStorage(
            JobID jobID,
            Configuration configuration,
            TaskManagerJobMetricGroup metricGroup,
            LocalRecoveryConfig localRecoveryConfig)
            throws IOException {
        return new DfsBatchedChangelogStorage(
                jobID,
                DfsChangelogSettings.forWriting(configuration),
                metricGroup,
                localRecoveryConfig,
                localTempDirectory(configuration));
    }

    @Override
    public DfsChangelogStorageView createStorageView(Configuration configuration) {
        return new DfsChangelogStorageView(
                DfsChangelogSettings.forReading(configuration), localTempDirectory(configuration));
    }

    private static File localTempDirectory(Configuration configuration) {
        String[] dirs = ConfigurationUtils.parseTempDirectories(configuration);
        return new File(dirs.length > 0 ? dirs[0] : System.getProperty("java.io.tmpdir"));
    }
}
