package io.github.flinkstate.disagg;

import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.runtime.state.StateBackendFactory;

/**
 * Creates {@link DisaggregatedStateBackend} for {@code state.backend.type:
 * io.github.flinkstate.disagg.DisaggregatedStateBackendFactory}. Validates the options (a bad value
 * fails the job at start, naming the option); free of side effects.
 */
public class DisaggregatedStateBackendFactory
        implements StateBackendFactory<DisaggregatedStateBackend> {

    @Override
    public DisaggregatedStateBackend createFromConfig(
            ReadableConfig config, ClassLoader classLoader) throws IllegalConfigurationException {
        return new DisaggregatedStateBackend().configure(config, classLoader);
    }
}
