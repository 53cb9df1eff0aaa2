package io.github.flinkstate.changelog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.time.Duration;
import java.util.List;
import java.util.ServiceLoader;
import java.util.stream.StreamSupport;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.StateChangelogOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.metrics.groups.UnregisteredMetricGroups;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.LocalRecoveryConfig;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.StateBackendLoader;
import org.apache.flink.runtime.state.changelog.ChangelogStateBackendHandle;
import org.apache.flink.runtime.state.changelog.StateChangelogStorage;
import org.apache.flink.runtime.state.changelog.StateChangelogStorageFactory;
import org.apache.flink.runtime.state.changelog.StateChangelogStorageLoader;
import org.apache.flink.runtime.state.delegate.DelegatingStateBackend;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** SPI registration, option validation and {@link ChangelogStateBackendFactory}. */
class FactoriesTest {

    @TempDir File tmp;

    private static Configuration backendConfig() {
        Configuration config = new Configuration();
        config.set(StateBackendOptions.STATE_BACKEND, ChangelogStateBackendFactory.class.getName());
        config.set(StateChangelogOptions.STATE_CHANGE_LOG_STORAGE, "dfs-batched");
        // nothing is created there: the factory only checks that Flink has its file system
        config.set(
                DfsChangelogOptions.BASE_PATH,
                new File(System.getProperty("java.io.tmpdir"), "dstl").toURI().toString());
        return config;
    }

    @Test
    void storageFactory_isRegisteredAsService_withLowerCaseIdentifier() {
        assertThat(
                        StreamSupport.stream(
                                        ServiceLoader.load(StateChangelogStorageFactory.class)
                                                .spliterator(),
                                        false)
                                .map(StateChangelogStorageFactory::getIdentifier))
                .contains("dfs-batched");
        assertThat(DfsBatchedChangelogStorageFactory.IDENTIFIER).isLowerCase();
    }

    @Test
    void taskManagerLoader_createsOurStorage() throws Exception {
        Configuration config = new Configuration();
        config.set(StateChangelogOptions.STATE_CHANGE_LOG_STORAGE, "dfs-batched");
        config.set(DfsChangelogOptions.BASE_PATH, new Path(tmp.toURI()).toString());
        StateChangelogStorage<?> storage =
                StateChangelogStorageLoader.load(
                        new JobID(),
                        config,
                        UnregisteredMetricGroups.createUnregisteredTaskManagerJobMetricGroup(),
                        LocalRecoveryConfig.BACKUP_AND_RECOVERY_DISABLED);
        assertThat(storage).isInstanceOf(DfsBatchedChangelogStorage.class);
        storage.close();
    }

    @Test
    void missingBasePath_failsNamingTheOption() {
        assertThatThrownBy(
                        () ->
                                new DfsBatchedChangelogStorageFactory()
                                        .createStorage(
                                                new JobID(),
                                                new Configuration(),
                                                UnregisteredMetricGroups
                                                        .createUnregisteredTaskManagerJobMetricGroup(),
                                                LocalRecoveryConfig.BACKUP_AND_RECOVERY_DISABLED))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("state.changelog.dstl.dfs-batched.base-path");
    }

    @Test
    void invalidOption_failsNamingTheOption() {
        Configuration config = new Configuration();
        config.set(DfsChangelogOptions.BASE_PATH, "file:///tmp/x");
        config.set(DfsChangelogOptions.MAX_ATTEMPTS, 0);
        assertThatThrownBy(() -> DfsChangelogSettings.forWriting(config))
                .hasMessageContaining(DfsChangelogOptions.MAX_ATTEMPTS.key());
    }

    /**
     * Values that used to be accepted and then hung the job (an in-flight limit of 0 never lets the
     * storage become available again, so Flink pauses the input for good), uploaded once per state
     * change (a pre-emptive threshold of 0), re-downloaded every shared file per reader (an idle
     * timeout of 0), silently ignored one of two settings (a hedging minimum above the upload
     * timeout), or failed without naming the option (a malformed base path). Found in a review.
     */
    @ParameterizedTest(name = "{0} = {1}")
    @CsvSource({
        "state.changelog.dstl.dfs-batched.upload.max-in-flight, 0b",
        "state.changelog.dstl.dfs-batched.preemptive-persist-threshold, 0b",
        "state.changelog.dstl.dfs-batched.download.local-cache.idle-timeout, 0ms",
        "state.changelog.dstl.dfs-batched.upload.hedge.min-delay, 2s",
        "state.changelog.dstl.dfs-batched.base-path, 'hdfs://[x/y'",
    })
    void badValue_failsAtStartNamingTheOption(String key, String value) {
        Configuration config = new Configuration();
        config.set(DfsChangelogOptions.BASE_PATH, "file:///tmp/x");
        config.setString(key, value);
        assertThatThrownBy(() -> DfsChangelogSettings.forWriting(config))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining(key);
    }

    /**
     * The TaskManagers create the storage from their own configuration for every job, so a base
     * path that is missing, relative or on a file system Flink has no plugin for failed every task
     * deployment there, in a restart loop; the factory now refuses it where the job is submitted,
     * naming the option.
     */
    @ParameterizedTest(name = "base path \"{0}\"")
    @CsvSource(
            value = {
                "'', needs a base directory",
                "dstl/relative, absolute",
                "nosuchfs://host/dstl, No file system"
            },
            quoteCharacter = '\'')
    void backendFactory_refusesAnUnusableBasePath_whereTheJobIsSubmitted(
            String basePath, String message) {
        Configuration config = backendConfig();
        if (basePath.isEmpty()) {
            config.removeConfig(DfsChangelogOptions.BASE_PATH);
        } else {
            config.set(DfsChangelogOptions.BASE_PATH, basePath);
        }
        assertThatThrownBy(
                        () ->
                                StateBackendLoader.loadStateBackendFromConfig(
                                        config, getClass().getClassLoader(), null))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining(DfsChangelogOptions.BASE_PATH.key())
                .hasMessageContaining(message);
    }

    /**
     * The backend factory runs where the job is submitted as well: a bad DSTL option fails there,
     * naming it, instead of failing every task deployment on the TaskManagers.
     */
    @Test
    void backendFactory_refusesABadDstlOptionNamingIt() {
        Configuration config = backendConfig();
        config.setString("state.changelog.dstl.dfs-batched.upload.max-in-flight", "0b");
        assertThatThrownBy(
                        () ->
                                StateBackendLoader.loadStateBackendFromConfig(
                                        config, getClass().getClassLoader(), null))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("state.changelog.dstl.dfs-batched.upload.max-in-flight");
    }

    @Test
    void aTimeoutBelowTheDefaultHedgingMinimum_isAccepted() {
        Configuration config = new Configuration();
        config.set(DfsChangelogOptions.BASE_PATH, "file:///tmp/x");
        config.setString("state.changelog.dstl.dfs-batched.upload.timeout", "20ms");
        assertThat(DfsChangelogSettings.forWriting(config).uploadTimeout())
                .isEqualTo(Duration.ofMillis(20));
    }

    @Test
    void backendFactory_wrapsHashMapByDefault_inFlinksChangelogBackend() throws Exception {
        StateBackend backend =
                StateBackendLoader.loadStateBackendFromConfig(
                        backendConfig(), getClass().getClassLoader(), null);
        assertThat(backend.getClass().getName())
                .isEqualTo("org.apache.flink.state.changelog.ChangelogStateBackend");
        assertThat(((DelegatingStateBackend) backend).getDelegatedStateBackend())
                .isInstanceOf(HashMapStateBackend.class);
    }

    @Test
    void backendFactory_wrapsRocksDb() throws Exception {
        Configuration config = backendConfig();
        config.set(DfsChangelogOptions.DELEGATE, "rocksdb");
        StateBackend backend =
                new ChangelogStateBackendFactory()
                        .createFromConfig(config, getClass().getClassLoader());
        assertThat(((DelegatingStateBackend) backend).getDelegatedStateBackend())
                .isInstanceOf(EmbeddedRocksDBStateBackend.class);
    }

    @Test
    void backendFactory_acceptsFactoryClassName() throws Exception {
        Configuration config = backendConfig();
        config.set(
                DfsChangelogOptions.DELEGATE,
                "org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackendFactory");
        StateBackend backend =
                new ChangelogStateBackendFactory()
                        .createFromConfig(config, getClass().getClassLoader());
        assertThat(((DelegatingStateBackend) backend).getDelegatedStateBackend())
                .isInstanceOf(EmbeddedRocksDBStateBackend.class);
    }

    @Test
    void backendFactory_rejectsOtherStorage_namingTheOption() {
        Configuration config = backendConfig();
        config.set(StateChangelogOptions.STATE_CHANGE_LOG_STORAGE, "filesystem");
        assertThatThrownBy(
                        () ->
                                new ChangelogStateBackendFactory()
                                        .createFromConfig(config, getClass().getClassLoader()))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("state.changelog.storage")
                .hasMessageContaining("filesystem");
    }

    @Test
    void backendFactory_rejectsDoubleWrapping_namingTheOption() {
        Configuration config = backendConfig();
        config.set(StateChangelogOptions.ENABLE_STATE_CHANGE_LOG, true);
        assertThatThrownBy(
                        () ->
                                new ChangelogStateBackendFactory()
                                        .createFromConfig(config, getClass().getClassLoader()))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("state.changelog.enabled");
    }

    @Test
    void backendFactory_noClaimResume_returnsTheDelegateWithChangelogOff() throws Exception {
        Configuration config = backendConfig();
        config.set(DfsChangelogOptions.DELEGATE, "rocksdb");
        config.set(StateRecoveryOptions.SAVEPOINT_PATH, "file:///savepoints/sp-1");
        StateBackend backend =
                new ChangelogStateBackendFactory()
                        .createFromConfig(config, getClass().getClassLoader());
        assertThat(backend).isInstanceOf(ChangelogOffStateBackend.class);
        assertThat(backend).isNotInstanceOf(DelegatingStateBackend.class);
        assertThat(StateBackendLoader.isChangelogStateBackend(backend)).isFalse();
        assertThat(backend.supportsNoClaimRestoreMode()).isTrue();
        ChangelogOffStateBackend off = (ChangelogOffStateBackend) backend;
        assertThat(off.getDelegate()).isInstanceOf(EmbeddedRocksDBStateBackend.class);
        assertThat(backend.useManagedMemory()).isEqualTo(off.getDelegate().useManagedMemory());
        assertThat(off.reason()).contains("file:///savepoints/sp-1").contains("NO_CLAIM");

        // Flink wraps it for the replay of changelog handles: the wrap must be accepted
        KeyedStateHandle changelogHandle =
                new ChangelogStateBackendHandle.ChangelogStateBackendHandleImpl(
                        List.of(), List.of(), KeyGroupRange.of(0, 1), 1L, 1L, 0L);
        assertThat(
                        StateBackendLoader.loadStateBackendFromKeyedStateHandles(
                                        backend,
                                        getClass().getClassLoader(),
                                        List.of(changelogHandle))
                                .getClass()
                                .getName())
                .isEqualTo("org.apache.flink.state.changelog.DeactivatedChangelogStateBackend");

        config.set(StateRecoveryOptions.RESTORE_MODE, RecoveryClaimMode.CLAIM);
        assertThat(
                        StateBackendLoader.isChangelogStateBackend(
                                new ChangelogStateBackendFactory()
                                        .createFromConfig(config, getClass().getClassLoader())))
                .isTrue();
    }

    @Test
    void backendFactory_rejectsRecursiveDelegate() {
        Configuration config = backendConfig();
        config.set(DfsChangelogOptions.DELEGATE, ChangelogStateBackendFactory.class.getName());
        assertThatThrownBy(
                        () ->
                                new ChangelogStateBackendFactory()
                                        .createFromConfig(config, getClass().getClassLoader()))
                .hasMessageContaining("state.backend.changelog.delegate");
    }

    @Test
    void backendFactory_unknownDelegate_failsNamingTheOption() {
        Configuration config = backendConfig();
        config.set(DfsChangelogOptions.DELEGATE, "com.example.NoSuchFactory");
        assertThatThrownBy(
                        () ->
                                new ChangelogStateBackendFactory()
                                        .createFromConfig(config, getClass().getClassLoader()))
                .hasMessageContaining("state.backend.changelog.delegate");
    }

    // ---- finding 6 of issue 13; failed before its fix -------------------------------------

    @Test
    void backendFactory_rejectsConcurrentCheckpoints_namingTheOption() throws Exception {
        Configuration config = backendConfig();
        config.set(CheckpointingOptions.MAX_CONCURRENT_CHECKPOINTS, 2);
        assertThatThrownBy(
                        () ->
                                new ChangelogStateBackendFactory()
                                        .createFromConfig(config, getClass().getClassLoader()))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining(CheckpointingOptions.MAX_CONCURRENT_CHECKPOINTS.key())
                .hasMessageContaining("1");
        config.set(CheckpointingOptions.MAX_CONCURRENT_CHECKPOINTS, 1);
        assertThat(
                        new ChangelogStateBackendFactory()
                                .createFromConfig(config, getClass().getClassLoader()))
                .isNotNull();
    }
}
