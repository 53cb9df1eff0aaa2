package io.github.flinkstate.lru;

import io.github.flinkstate.lru.backend.LruCacheKeyedStateBackendBuilder;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.AbstractStateBackend;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.runtime.state.OperatorStateBackend;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.delegate.DelegatingStateBackend;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A state backend that puts a write-back, object-level LRU cache in front of another backend
 * (FLIP-325). With a cache big enough for the working set it runs at heap speed; state beyond the
 * cache lives in the delegate (RocksDB by default), so there is no risk of running out of memory.
 * Values are returned by reference (object reuse), as with the HashMap backend.
 *
 * <p>Operator state, timers and canonical savepoints are the delegate's. Checkpoints are packaged
 * in Flink's own handle types, so they work with any checkpoint storage, rescaling and the
 * changelog backend.
 *
 * <p>Serializable configuration object; immutable after {@link #configure}.
 */
public class StateBackendWrapperWithLRUCache extends AbstractStateBackend
        implements ConfigurableStateBackend {

    private static final Logger LOG =
            LoggerFactory.getLogger(StateBackendWrapperWithLRUCache.class);

    private static final long serialVersionUID = 1L;

    /** Whether the warning that no cache size is set was logged in this JVM. */
    private static final AtomicBoolean WARNED_NO_SIZE = new AtomicBoolean();

    private final StateBackend delegate;
    private final int maxEntries;
    private final boolean copyValuesOnWrite;
    private boolean scanResistant = LruCacheOptions.SCAN_RESISTANCE.defaultValue();

    /**
     * @param delegate the backend behind the cache
     * @param maxEntries maximum cached entries per keyed backend; 0 disables the cache
     */
    public StateBackendWrapperWithLRUCache(StateBackend delegate, int maxEntries) {
        this(delegate, maxEntries, LruCacheOptions.COPY_VALUES_ON_WRITE.defaultValue());
    }

    /**
     * @param delegate the backend behind the cache
     * @param maxEntries maximum cached entries per keyed backend; 0 disables the cache
     * @param copyValuesOnWrite whether written values are copied before they are cached (see {@link
     *     LruCacheOptions#COPY_VALUES_ON_WRITE})
     */
    public StateBackendWrapperWithLRUCache(
            StateBackend delegate, int maxEntries, boolean copyValuesOnWrite) {
        if (maxEntries < 0) {
            throw new IllegalConfigurationException(
                    "'"
                            + LruCacheOptions.MAX_ENTRIES_NUM.key()
                            + "' must not be negative, but is "
                            + maxEntries);
        }
        if (delegate == null) {
            throw new IllegalConfigurationException(
                    "The LRU cache needs a delegate backend ('"
                            + LruCacheOptions.DELEGATE.key()
                            + "')");
        }
        if (delegate instanceof StateBackendWrapperWithLRUCache) {
            throw new IllegalConfigurationException(
                    "The delegate of the LRU cache ('"
                            + LruCacheOptions.DELEGATE.key()
                            + "') must not be another LRU cache");
        }
        if (delegate instanceof DelegatingStateBackend
                || !(delegate instanceof AbstractStateBackend)) {
            // the keyed backend builder needs the delegate's own keyed backend
            throw new IllegalConfigurationException(
                    "The delegate of the LRU cache ('"
                            + LruCacheOptions.DELEGATE.key()
                            + "') must be a keyed state backend itself, not "
                            + delegate.getClass().getName()
                            + (delegate instanceof DelegatingStateBackend
                                    ? ", a wrapping backend; put the LRU cache under the"
                                            + " changelog backend instead"
                                            + " (state.backend.changelog.delegate or"
                                            + " state.changelog.enabled)"
                                    : ", which is not an AbstractStateBackend"));
        }
        this.delegate = delegate;
        this.maxEntries = maxEntries;
        this.copyValuesOnWrite = copyValuesOnWrite;
    }

    private StateBackendWrapperWithLRUCache(
            StateBackendWrapperWithLRUCache original,
            ReadableConfig config,
            ClassLoader classLoader) {
        this(
                configureDelegate(original.delegate, config, classLoader),
                original.maxEntries,
                config.getOptional(LruCacheOptions.COPY_VALUES_ON_WRITE)
                        .orElse(original.copyValuesOnWrite));
        this.scanResistant =
                config.getOptional(LruCacheOptions.SCAN_RESISTANCE).orElse(original.scanResistant);
        this.latencyTrackingConfigBuilder = original.latencyTrackingConfigBuilder.configure(config);
        this.sizeTrackingConfigBuilder = original.sizeTrackingConfigBuilder.configure(config);
    }

    private static StateBackend configureDelegate(
            StateBackend delegate, ReadableConfig config, ClassLoader classLoader) {
        return delegate instanceof ConfigurableStateBackend
                ? ((ConfigurableStateBackend) delegate).configure(config, classLoader)
                : delegate;
    }

    /** Creates the backend from configuration (see {@link LruCacheOptions}). */
    public static StateBackendWrapperWithLRUCache fromConfig(
            ReadableConfig config, ClassLoader classLoader) {
        int maxEntries = config.get(LruCacheOptions.MAX_ENTRIES_NUM);
        if (maxEntries < 0) {
            throw new IllegalConfigurationException(
                    "'"
                            + LruCacheOptions.MAX_ENTRIES_NUM.key()
                            + "' must not be negative, but is "
                            + maxEntries);
        }
        if (config.getOptional(LruCacheOptions.MAX_ENTRIES_NUM).isEmpty()
                && !WARNED_NO_SIZE.getAndSet(true)) { // once per JVM, not per subtask and restart
            LOG.warn(
                    "'{}' is not set: the LRU cache holds nothing and passes every call to its"
                            + " delegate; set it to the entries to cache per keyed subtask",
                    LruCacheOptions.MAX_ENTRIES_NUM.key());
        }
        StateBackendWrapperWithLRUCache backend =
                new StateBackendWrapperWithLRUCache(
                        DelegateBackendLoader.load(config, classLoader),
                        maxEntries,
                        config.get(LruCacheOptions.COPY_VALUES_ON_WRITE));
        backend.scanResistant = config.get(LruCacheOptions.SCAN_RESISTANCE);
        backend.latencyTrackingConfigBuilder =
                backend.latencyTrackingConfigBuilder.configure(config);
        backend.sizeTrackingConfigBuilder = backend.sizeTrackingConfigBuilder.configure(config);
        return backend;
    }

    @Override
    public StateBackendWrapperWithLRUCache configure(ReadableConfig config, ClassLoader classLoader)
            throws IllegalConfigurationException {
        return new StateBackendWrapperWithLRUCache(this, config, classLoader);
    }

    public StateBackend getDelegate() {
        return delegate;
    }

    public int getMaxEntries() {
        return maxEntries;
    }

    public boolean isCopyValuesOnWrite() {
        return copyValuesOnWrite;
    }

    /** See {@link LruCacheOptions#SCAN_RESISTANCE}. */
    public boolean isScanResistant() {
        return scanResistant;
    }

    /** Turns scan resistance on or off (see {@link LruCacheOptions#SCAN_RESISTANCE}). */
    public StateBackendWrapperWithLRUCache setScanResistant(boolean scanResistant) {
        this.scanResistant = scanResistant;
        return this;
    }

    @Override
    public String getName() {
        return "LRU cache over " + delegate.getName();
    }

    @Override
    public <K> AbstractKeyedStateBackend<K> createKeyedStateBackend(
            KeyedStateBackendParameters<K> parameters) throws IOException {
        return new LruCacheKeyedStateBackendBuilder<>(
                        delegate,
                        maxEntries,
                        copyValuesOnWrite,
                        scanResistant,
                        parameters,
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
        return delegate.createOperatorStateBackend(parameters);
    }

    @Override
    public boolean useManagedMemory() {
        return delegate.useManagedMemory();
    }

    @Override
    public boolean supportsNoClaimRestoreMode() {
        return delegate.supportsNoClaimRestoreMode();
    }

    @Override
    public boolean supportsSavepointFormat(SavepointFormatType formatType) {
        return delegate.supportsSavepointFormat(formatType);
    }

    @Override
    public String toString() {
        return "StateBackendWrapperWithLRUCache{maxEntries="
                + maxEntries
                + ", copyValuesOnWrite="
                + copyValuesOnWrite
                + ", scanResistant="
                + scanResistant
                + ", delegate="
                + delegate
                + '}';
    }
}
