package io.github.flinkstate.composition;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.runtime.state.CheckpointableKeyedStateBackend;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.OperatorStateBackend;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.TaskStateManager;
import org.apache.flink.runtime.state.TestTaskStateManager;
import org.apache.flink.runtime.state.changelog.StateChangelogStorage;

/**
 * A {@link StateBackend} for test harnesses that build the task {@link Environment} themselves: it
 * hands the backend it wraps (Flink's changelog backend) the caller's environment with one change,
 * a {@link TaskStateManager} offering the given changelog storage. Flink's TTL suite ({@code
 * StateBackendTestContext}) builds a {@code MockEnvironment} whose task state manager holds Flink's
 * in-memory changelog storage and offers no way to set another; through this wrapper the changelog
 * backend writes to our DSTL there, as it does in a TaskManager. Restores read the changelog
 * through the storage named by the handle, as in a TaskManager.
 *
 * <p>Everything but {@code getTaskStateManager()} is answered by the caller's environment (a
 * dynamic proxy over {@link Environment}); operator state and the backend's properties come from
 * the wrapped backend unchanged.
 *
 * <p>Thread safety: as the wrapped backend; the wrapper holds no mutable state. The storage is
 * owned by the caller, who closes it after the last keyed backend using it is disposed.
 */
final class ChangelogStorageInjectingBackend implements StateBackend {

    private static final long serialVersionUID = 1L;

    private final StateBackend backend;
    private final transient StateChangelogStorage<?> storage;

    ChangelogStorageInjectingBackend(StateBackend backend, StateChangelogStorage<?> storage) {
        this.backend = backend;
        this.storage = storage;
    }

    @Override
    public <K> CheckpointableKeyedStateBackend<K> createKeyedStateBackend(
            KeyedStateBackendParameters<K> parameters) throws Exception {
        return backend.createKeyedStateBackend(
                new KeyedStateBackendParametersImpl<>(
                        withStorage(parameters.getEnv()),
                        parameters.getJobID(),
                        parameters.getOperatorIdentifier(),
                        parameters.getKeySerializer(),
                        parameters.getNumberOfKeyGroups(),
                        parameters.getKeyGroupRange(),
                        parameters.getKvStateRegistry(),
                        parameters.getTtlTimeProvider(),
                        parameters.getMetricGroup(),
                        parameters.getCustomInitializationMetrics(),
                        parameters.getStateHandles(),
                        parameters.getCancelStreamRegistry(),
                        parameters.getManagedMemoryFraction()));
    }

    @Override
    public OperatorStateBackend createOperatorStateBackend(
            OperatorStateBackendParameters parameters) throws Exception {
        return backend.createOperatorStateBackend(parameters);
    }

    @Override
    public String getName() {
        return backend.getName();
    }

    @Override
    public boolean useManagedMemory() {
        return backend.useManagedMemory();
    }

    @Override
    public boolean supportsNoClaimRestoreMode() {
        return backend.supportsNoClaimRestoreMode();
    }

    @Override
    public boolean supportsSavepointFormat(SavepointFormatType formatType) {
        return backend.supportsSavepointFormat(formatType);
    }

    /** {@code env} with a task state manager offering {@link #storage}. */
    private Environment withStorage(Environment env) {
        TaskStateManager taskStateManager =
                TestTaskStateManager.builder().setStateChangelogStorage(storage).build();
        return (Environment)
                Proxy.newProxyInstance(
                        Environment.class.getClassLoader(),
                        new Class<?>[] {Environment.class},
                        (proxy, method, args) -> {
                            if (method.getName().equals("getTaskStateManager")
                                    && method.getParameterCount() == 0) {
                                return taskStateManager;
                            }
                            try {
                                return method.invoke(env, args);
                            } catch (InvocationTargetException e) {
                                throw e.getCause();
                            }
                        });
    }
}
