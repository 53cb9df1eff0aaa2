package io.github.flinkstate.changelog;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.StateChangelogOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.StateBackendFactory;
import org.apache.flink.runtime.state.StateBackendLoader;
import org.apache.flink.runtime.state.delegate.DelegatingStateBackend;
import org.apache.flink.util.DynamicCodeLoadingException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code state.backend.type: io.github.flinkstate.changelog.ChangelogStateBackendFactory}: builds
 * Flink's own {@code org.apache.flink.state.changelog.ChangelogStateBackend} around the backend
 * named by {@code state.backend.changelog.delegate}, for use with the {@code dfs-batched} DSTL.
 *
 * <p>Flink's class must be used (not a subclass or copy): the runtime recognises changelog
 * checkpoints by that exact class on restore. Its constructor is package-private, so it is called
 * reflectively, as Flink's {@link StateBackendLoader} does.
 *
 * <p>Checks, each failing with a message naming the option to change:
 *
 * <ol>
 *   <li>{@code state.changelog.storage} must be {@code dfs-batched};
 *   <li>{@code state.changelog.enabled} must not also be true (Flink would wrap twice);
 *   <li>{@code execution.checkpointing.max-concurrent-checkpoints} must be 1, the only value
 *       Flink's changelog backend supports;
 *   <li>the delegate must not itself be a changelog backend or this factory.
 * </ol>
 *
 * <p>NO_CLAIM resumes: when {@code execution.state-recovery.path} is set and the claim mode is
 * NO_CLAIM (Flink's default), the factory returns the delegate itself (as {@link
 * ChangelogOffStateBackend}, which reports why) and logs a WARN line: Flink then replays the
 * changelog checkpoint into it through its {@code DeactivatedChangelogStateBackend}, and the
 * delegate takes the full checkpoint NO_CLAIM requires. Changelog stays off for that run and is on
 * again after the next CLAIM resume. See docs/changelog-dstl.md, "Claim modes".
 *
 * <p>Thread safety: stateless. Flink calls it on the JobManager and in every task, so it has no
 * side effects.
 */
public final class ChangelogStateBackendFactory implements StateBackendFactory<StateBackend> {

    private static final Logger LOG = LoggerFactory.getLogger(ChangelogStateBackendFactory.class);

    static final String CHANGELOG_BACKEND_CLASS =
            "org.apache.flink.state.changelog.ChangelogStateBackend";

    @Override
    public StateBackend createFromConfig(ReadableConfig config, ClassLoader classLoader)
            throws IllegalConfigurationException, IOException {
        validate(config);
        StateBackend delegate = loadDelegate(config, classLoader);
        if (delegate instanceof DelegatingStateBackend) {
            throw new IllegalConfigurationException(
                    "'"
                            + DfsChangelogOptions.DELEGATE.key()
                            + "' names a delegating backend ("
                            + delegate.getClass().getName()
                            + "); Flink's changelog backend cannot wrap it.");
        }
        String offReason = changelogOffReason(config);
        if (offReason != null) {
            LOG.warn(
                    "Changelog is OFF for this run: {}. Flink replays the changelog of the"
                            + " restored checkpoint into {} and the first checkpoint is a full one;"
                            + " set '{}: CLAIM' to keep changelog on.",
                    offReason,
                    delegate.getClass().getSimpleName(),
                    StateRecoveryOptions.RESTORE_MODE.key());
            return new ChangelogOffStateBackend(delegate, offReason);
        }
        StateBackend backend = wrap(delegate, classLoader);
        LOG.info(
                "Created ChangelogStateBackend over {} with the dfs-batched DSTL",
                delegate.getClass().getSimpleName());
        return backend;
    }

    static void validate(ReadableConfig config) {
        String storage = config.get(StateChangelogOptions.STATE_CHANGE_LOG_STORAGE);
        if (!DfsBatchedChangelogStorageFactory.IDENTIFIER.equalsIgnoreCase(storage)) {
            throw new IllegalConfigurationException(
                    "State backend factory "
                            + ChangelogStateBackendFactory.class.getName()
                            + " needs the dfs-batched DSTL, but '"
                            + StateChangelogOptions.STATE_CHANGE_LOG_STORAGE.key()
                            + "' is '"
                            + storage
                            + "'. Set '"
                            + StateChangelogOptions.STATE_CHANGE_LOG_STORAGE.key()
                            + ": "
                            + DfsBatchedChangelogStorageFactory.IDENTIFIER
                            + "' in the cluster configuration of every TaskManager and the"
                            + " JobManager.");
        }
        if (config.get(StateChangelogOptions.ENABLE_STATE_CHANGE_LOG)) {
            throw new IllegalConfigurationException(
                    "'"
                            + StateChangelogOptions.ENABLE_STATE_CHANGE_LOG.key()
                            + "' is true and '"
                            + StateBackendOptions.STATE_BACKEND.key()
                            + "' is "
                            + ChangelogStateBackendFactory.class.getName()
                            + ": the changelog would be applied twice. Set '"
                            + StateChangelogOptions.ENABLE_STATE_CHANGE_LOG.key()
                            + ": false' (this factory already enables it), or use"
                            + " a plain backend type with the option.");
        }
        int concurrent = config.get(CheckpointingOptions.MAX_CONCURRENT_CHECKPOINTS);
        if (concurrent > 1) {
            throw new IllegalConfigurationException(
                    "'"
                            + CheckpointingOptions.MAX_CONCURRENT_CHECKPOINTS.key()
                            + "' is "
                            + concurrent
                            + ", but Flink's changelog state backend supports only 1 concurrent"
                            + " checkpoint: with more, a DSTL file shared by several checkpoints"
                            + " can be deleted while a newer checkpoint still needs it. Set '"
                            + CheckpointingOptions.MAX_CONCURRENT_CHECKPOINTS.key()
                            + ": 1'.");
        }
        // the storage's own options, base path and its file system included: here too, so that a
        // bad one fails where the job is submitted. The TaskManagers create the storage from their
        // own configuration for every job (whether it uses changelog or not), so a bad value there
        // fails every task deployment on them, in a restart loop
        try {
            DfsChangelogSettings.forWriting(config).checkBasePathFileSystem();
        } catch (IOException e) {
            throw new IllegalConfigurationException(e.getMessage(), e);
        }
    }

    /**
     * The reason changelog must be off for this run, or null: a resume from {@code
     * execution.state-recovery.path} in NO_CLAIM mode, which requires a full first checkpoint that
     * Flink's changelog backend cannot take. Only the configuration is visible here: a restore set
     * only on a submitted JobGraph's {@code SavepointRestoreSettings} is not.
     */
    static String changelogOffReason(ReadableConfig config) {
        String recoveryPath = config.get(StateRecoveryOptions.SAVEPOINT_PATH);
        if (recoveryPath == null
                || recoveryPath.isBlank()
                || config.get(StateRecoveryOptions.RESTORE_MODE) != RecoveryClaimMode.NO_CLAIM) {
            return null;
        }
        return "resumed from '"
                + recoveryPath
                + "' in NO_CLAIM mode; Flink's changelog backend cannot take the full checkpoint"
                + " NO_CLAIM requires, so this run checkpoints with the delegate alone until it is"
                + " next resumed in CLAIM mode";
    }

    private static StateBackend loadDelegate(ReadableConfig config, ClassLoader classLoader)
            throws IOException {
        String delegate = config.get(DfsChangelogOptions.DELEGATE).trim();
        if (delegate.isEmpty()
                || delegate.equals(ChangelogStateBackendFactory.class.getName())
                || delegate.equalsIgnoreCase("changelog")) {
            throw new IllegalConfigurationException(
                    "'"
                            + DfsChangelogOptions.DELEGATE.key()
                            + "' must name the wrapped backend"
                            + " ('hashmap', 'rocksdb' or a StateBackendFactory class), but is '"
                            + delegate
                            + "'.");
        }
        Configuration delegateConfig = Configuration.fromMap(config.toMap());
        delegateConfig.set(StateBackendOptions.STATE_BACKEND, delegate);
        try {
            return StateBackendLoader.loadStateBackendFromConfig(delegateConfig, classLoader, LOG);
        } catch (DynamicCodeLoadingException e) {
            throw new IllegalConfigurationException(
                    "Cannot load the backend named by '"
                            + DfsChangelogOptions.DELEGATE.key()
                            + "': "
                            + delegate,
                    e);
        }
    }

    static StateBackend wrap(StateBackend delegate, ClassLoader classLoader) {
        Class<?> changelogClass;
        try {
            changelogClass = Class.forName(CHANGELOG_BACKEND_CLASS, false, classLoader);
        } catch (ClassNotFoundException e) {
            try {
                changelogClass =
                        Class.forName(
                                CHANGELOG_BACKEND_CLASS,
                                false,
                                ChangelogStateBackendFactory.class.getClassLoader());
            } catch (ClassNotFoundException again) {
                throw new IllegalConfigurationException(
                        "Flink's changelog state backend (flink-statebackend-changelog) is not on"
                                + " the class path",
                        again);
            }
        }
        try {
            Constructor<? extends DelegatingStateBackend> constructor =
                    changelogClass
                            .asSubclass(DelegatingStateBackend.class)
                            .getDeclaredConstructor(StateBackend.class);
            constructor.setAccessible(true);
            return constructor.newInstance(delegate);
        } catch (InvocationTargetException e) {
            throw new IllegalConfigurationException(
                    "Cannot create Flink's changelog state backend: " + e.getCause(), e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalConfigurationException(
                    "Cannot create Flink's changelog state backend", e);
        }
    }
}
