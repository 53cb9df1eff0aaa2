package io.github.flinkstate.disagg;

import io.github.flinkstate.disagg.backend.BackendSettings;
import io.github.flinkstate.disagg.backend.DisaggregatedKeyedStateBackendBuilder;
import java.io.IOException;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.AbstractStateBackend;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.runtime.state.DefaultOperatorStateBackendBuilder;
import org.apache.flink.runtime.state.OperatorStateBackend;

/**
 * A keyed state backend whose primary copy is a pure-Java LSM tree on a Flink file system (see
 * docs/disaggregated.md): the synchronous state API reads and writes the engine, checkpoints
 * reference the engine's files in place ({@code IncrementalRemoteKeyedStateHandle}) and restores
 * open them in place, clipped to the new key-group range. Operator state uses Flink's default
 * operator state backend.
 *
 * <p>Thread safety: immutable and serializable (it travels with the job graph); each keyed backend
 * it creates is confined to its task thread.
 */
public class DisaggregatedStateBackend extends AbstractStateBackend
        implements ConfigurableStateBackend {

    private static final long serialVersionUID = 1L;

    /** Options set on this instance; values from the cluster configuration fill the rest. */
    private final Configuration options;

    public DisaggregatedStateBackend() {
        this(new Configuration());
    }

    public DisaggregatedStateBackend(Configuration options) {
        DisaggregatedOptions.validate(options);
        this.options = new Configuration(options);
    }

    @Override
    public DisaggregatedStateBackend configure(ReadableConfig config, ClassLoader classLoader)
            throws IllegalConfigurationException {
        Configuration merged = new Configuration();
        for (var option : DisaggregatedOptions.all()) {
            copy(config, merged, option);
        }
        // the claim mode decides whether restored files are copied in the background
        copy(config, merged, StateRecoveryOptions.RESTORE_MODE);
        merged.addAll(options);
        DisaggregatedStateBackend configured = new DisaggregatedStateBackend(merged);
        configured.latencyTrackingConfigBuilder = latencyTrackingConfigBuilder.configure(config);
        configured.sizeTrackingConfigBuilder = sizeTrackingConfigBuilder.configure(config);
        return configured;
    }

    private static <T> void copy(ReadableConfig from, Configuration to, ConfigOption<T> option) {
        from.getOptional(option).ifPresent(v -> to.set(option, v));
    }

    /** The value of {@code option} this backend uses (its own setting, else the default). */
    public <T> T option(ConfigOption<T> option) {
        return options.get(option);
    }

    /** A copy with one option changed (tests and programmatic setup). */
    public <T> DisaggregatedStateBackend with(
            org.apache.flink.configuration.ConfigOption<T> option, T value) {
        Configuration c = new Configuration(options);
        c.set(option, value);
        return new DisaggregatedStateBackend(c);
    }

    @Override
    public String getName() {
        return "disaggregated";
    }

    @Override
    public boolean supportsNoClaimRestoreMode() {
        return true;
    }

    @Override
    public boolean supportsSavepointFormat(SavepointFormatType formatType) {
        // native: the engine files copied into the savepoint; canonical: Flink's unified format
        return formatType == SavepointFormatType.NATIVE
                || formatType == SavepointFormatType.CANONICAL;
    }

    @Override
    public boolean useManagedMemory() {
        return false;
    }

    @Override
    public <K> AbstractKeyedStateBackend<K> createKeyedStateBackend(
            KeyedStateBackendParameters<K> parameters) throws IOException {
        BackendSettings settings =
                BackendSettings.resolve(options, parameters.getEnv(), parameters);
        return new DisaggregatedKeyedStateBackendBuilder<>(
                        parameters,
                        settings,
                        latencyTrackingConfigBuilder
                                .setMetricGroup(parameters.getMetricGroup())
                                .build(),
                        sizeTrackingConfigBuilder
                                .setMetricGroup(parameters.getMetricGroup())
                                .build())
                .build();
    }

    @Override
    public OperatorStateBackend createOperatorStateBackend(
            OperatorStateBackendParameters parameters) throws Exception {
        return new DefaultOperatorStateBackendBuilder(
                        parameters.getEnv().getUserCodeClassLoader().asClassLoader(),
                        parameters.getEnv().getExecutionConfig(),
                        true,
                        parameters.getStateHandles(),
                        parameters.getCancelStreamRegistry())
                .build();
    }
}
