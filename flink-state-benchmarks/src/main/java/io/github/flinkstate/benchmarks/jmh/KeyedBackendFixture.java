package io.github.flinkstate.benchmarks.jmh;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.operators.testutils.MockEnvironmentBuilder;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.util.FileUtils;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.Collections;

/**
 * One keyed state backend with {@code Long} keys, built directly (no job, no operator) on Flink's
 * {@link MockEnvironment}, as a Flink task would build it: 128 key groups, all owned, and 256 MB
 * of managed memory (RocksDB's block cache and write buffers come out of it).
 *
 * <p>Not thread-safe. Lifecycle: {@link #open} creates the backend and a temporary directory;
 * {@link #close} disposes the backend and deletes the directory.
 */
public final class KeyedBackendFixture implements AutoCloseable {

    public static final int MAX_PARALLELISM = 128;
    public static final long MANAGED_MEMORY_BYTES = 256L << 20;

    private final File dir;
    private final MockEnvironment env;
    private final AbstractKeyedStateBackend<Long> backend;

    private KeyedBackendFixture(File dir, MockEnvironment env, AbstractKeyedStateBackend<Long> backend) {
        this.dir = dir;
        this.env = env;
        this.backend = backend;
    }

    /** Creates the keyed backend of {@code kind}, sized for {@code workingSetEntries}. */
    public static KeyedBackendFixture open(BenchmarkBackend kind, long workingSetEntries) throws Exception {
        File dir = Files.createTempDirectory("flinkstate-jmh-").toFile();
        MockEnvironment env = new MockEnvironmentBuilder().setManagedMemorySize(MANAGED_MEMORY_BYTES).build();
        try {
            StateBackend stateBackend = kind.create(new File(dir, "db"), workingSetEntries);
            @SuppressWarnings("unchecked")
            AbstractKeyedStateBackend<Long> backend =
                    (AbstractKeyedStateBackend<Long>)
                            stateBackend.createKeyedStateBackend(
                                    new KeyedStateBackendParametersImpl<>(
                                            env,
                                            new JobID(),
                                            "jmh-" + kind.name().toLowerCase(),
                                            LongSerializer.INSTANCE,
                                            MAX_PARALLELISM,
                                            new KeyGroupRange(0, MAX_PARALLELISM - 1),
                                            env.getTaskKvStateRegistry(),
                                            TtlTimeProvider.DEFAULT,
                                            new UnregisteredMetricsGroup(),
                                            Collections.emptyList(),
                                            new CloseableRegistry()));
            return new KeyedBackendFixture(dir, env, backend);
        } catch (Exception e) {
            env.close();
            FileUtils.deleteDirectoryQuietly(dir);
            throw e;
        }
    }

    public AbstractKeyedStateBackend<Long> backend() {
        return backend;
    }

    /** The state of {@code descriptor} in the default namespace. */
    public <S extends org.apache.flink.api.common.state.State> S state(StateDescriptor<S, ?> descriptor)
            throws Exception {
        return backend.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, descriptor);
    }

    @Override
    public void close() throws IOException {
        try {
            backend.dispose();
            backend.close();
        } finally {
            try {
                env.close();
            } catch (Exception e) {
                throw new IOException(e);
            } finally {
                FileUtils.deleteDirectoryQuietly(dir);
            }
        }
    }
}
