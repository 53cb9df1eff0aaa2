package io.github.flinkstate.lru.backend;

import io.github.flinkstate.lru.metrics.CacheMetrics;
import io.github.flinkstate.lru.metrics.CacheStatistics;
import io.github.flinkstate.lru.restore.CacheSnapshotRestorer;
import io.github.flinkstate.lru.snapshot.CacheStreamHeader;
import io.github.flinkstate.lru.snapshot.SnapshotEnvelope;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.BackendBuildingException;
import org.apache.flink.runtime.state.CheckpointableKeyedStateBackend;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.metrics.LatencyTrackingStateConfig;
import org.apache.flink.runtime.state.metrics.SizeTrackingStateConfig;
import org.apache.flink.util.IOUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds an {@link LruCacheKeyedStateBackend}: separates our snapshot envelopes from the handles
 * meant for the delegate, builds and restores the delegate, replays restored cache entries into it,
 * and registers the metrics.
 *
 * <p>Restore input may mix our envelopes with handles of the plain delegate (e.g. a RocksDB
 * checkpoint taken before the cache was enabled) and canonical savepoints of any backend; after
 * rescaling, envelopes may cover more key groups than this backend, which keeps only its own.
 *
 * <p>Not thread-safe; used once.
 */
public final class LruCacheKeyedStateBackendBuilder<K> {

    private static final Logger LOG =
            LoggerFactory.getLogger(LruCacheKeyedStateBackendBuilder.class);

    private final StateBackend delegateBackend;
    private final int maxEntries;
    private final boolean copyValuesOnWrite;
    private final boolean scanResistant;
    private final StateBackend.KeyedStateBackendParameters<K> parameters;
    private final LatencyTrackingStateConfig latencyTrackingStateConfig;
    private final SizeTrackingStateConfig sizeTrackingStateConfig;

    public LruCacheKeyedStateBackendBuilder(
            StateBackend delegateBackend,
            int maxEntries,
            boolean copyValuesOnWrite,
            boolean scanResistant,
            StateBackend.KeyedStateBackendParameters<K> parameters,
            LatencyTrackingStateConfig latencyTrackingStateConfig,
            SizeTrackingStateConfig sizeTrackingStateConfig) {
        this.delegateBackend = delegateBackend;
        this.maxEntries = maxEntries;
        this.copyValuesOnWrite = copyValuesOnWrite;
        this.scanResistant = scanResistant;
        this.parameters = parameters;
        this.latencyTrackingStateConfig = latencyTrackingStateConfig;
        this.sizeTrackingStateConfig = sizeTrackingStateConfig;
    }

    public LruCacheKeyedStateBackend<K> build() throws IOException {
        List<KeyedStateHandle> delegateHandles = new ArrayList<>();
        List<StreamStateHandle> cacheStreams = new ArrayList<>();
        try {
            for (KeyedStateHandle handle : parameters.getStateHandles()) {
                StreamStateHandle cacheStream = SnapshotEnvelope.cacheStreamOf(handle);
                if (cacheStream == null) {
                    delegateHandles.add(handle);
                    continue;
                }
                CacheStreamHeader header =
                        CacheSnapshotRestorer.readHeader(
                                cacheStream, parameters.getCancelStreamRegistry());
                KeyedStateHandle inner =
                        SnapshotEnvelope.delegateHandleOf(
                                handle, header, parameters.getKeyGroupRange());
                if (inner != null) {
                    delegateHandles.add(inner);
                }
                cacheStreams.add(cacheStream);
            }
        } catch (IOException | RuntimeException e) {
            throw new BackendBuildingException(
                    "Could not read the LRU cache snapshot to restore from: " + e.getMessage(), e);
        }

        KeyedStateBackendParametersImpl<K> delegateParameters =
                new KeyedStateBackendParametersImpl<>(parameters);
        delegateParameters.setStateHandles(delegateHandles);
        CheckpointableKeyedStateBackend<K> built;
        try {
            built = delegateBackend.createKeyedStateBackend(delegateParameters);
        } catch (IOException e) {
            throw e;
        } catch (Exception e) {
            throw new BackendBuildingException("The delegate backend failed to build: " + e, e);
        }
        if (!(built instanceof AbstractKeyedStateBackend)) {
            IOUtils.closeQuietly(built);
            throw new BackendBuildingException(
                    "The LRU cache needs a delegate whose keyed backend extends AbstractKeyedStateBackend, but "
                            + delegateBackend.getClass().getName()
                            + " built a "
                            + built.getClass().getName(),
                    null);
        }
        AbstractKeyedStateBackend<K> delegate = (AbstractKeyedStateBackend<K>) built;
        try {
            if (!cacheStreams.isEmpty()) {
                CacheSnapshotRestorer<K> restorer =
                        new CacheSnapshotRestorer<>(
                                delegate,
                                parameters.getKeyGroupRange(),
                                parameters.getEnv().getUserCodeClassLoader().asClassLoader(),
                                parameters.getCancelStreamRegistry());
                long start = System.currentTimeMillis();
                for (StreamStateHandle stream : cacheStreams) {
                    restorer.apply(stream);
                }
                parameters
                        .getCustomInitializationMetrics()
                        .addMetric("lruCacheRestoreDurationMs", System.currentTimeMillis() - start);
            }
        } catch (Exception e) {
            IOUtils.closeQuietly(delegate::dispose);
            IOUtils.closeQuietly(delegate);
            throw new BackendBuildingException(
                    "Could not restore the LRU cache snapshot: " + e.getMessage(), e);
        }

        CacheStatistics statistics = new CacheStatistics();
        LruCacheKeyedStateBackend<K> backend =
                new LruCacheKeyedStateBackend<>(
                        delegate,
                        maxEntries,
                        copyValuesOnWrite,
                        scanResistant,
                        statistics,
                        parameters.getKvStateRegistry(),
                        // the delegate's: reconfigured by its restore when the snapshot required it
                        delegate.getKeySerializer(),
                        parameters.getEnv().getUserCodeClassLoader().asClassLoader(),
                        parameters.getEnv().getExecutionConfig(),
                        parameters.getTtlTimeProvider(),
                        latencyTrackingStateConfig,
                        sizeTrackingStateConfig,
                        // the parameters' registry only covers the restore and is closed after
                        // it; snapshots need one that lives as long as the backend
                        new CloseableRegistry());
        if (backend.getCache() != null) {
            CacheMetrics.register(parameters.getMetricGroup(), statistics, backend.getCache());
        }
        LOG.info(
                "Created LRU cache keyed backend for {} (key groups {}, max entries {}, delegate {}, restored {} handles of which {} with cache entries)",
                parameters.getOperatorIdentifier(),
                parameters.getKeyGroupRange(),
                maxEntries,
                delegate.getClass().getSimpleName(),
                parameters.getStateHandles().size(),
                cacheStreams.size());
        return backend;
    }
}
