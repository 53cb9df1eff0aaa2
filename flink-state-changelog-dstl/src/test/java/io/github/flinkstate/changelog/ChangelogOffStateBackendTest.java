package io.github.flinkstate.changelog;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.runtime.operators.testutils.MockEnvironmentBuilder;
import org.apache.flink.runtime.state.CheckpointableKeyedStateBackend;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.runtime.state.heap.HeapKeyedStateBackend;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.junit.jupiter.api.Test;

/**
 * {@link ChangelogOffStateBackend}: the delegate's keyed backend, and the gauges saying changelog
 * is off and why on the keyed backend's metric group.
 */
class ChangelogOffStateBackendTest {

    /** Keeps the registered gauges. */
    private static final class GaugeCapture extends UnregisteredMetricsGroup {
        final Map<String, Gauge<?>> gauges = new HashMap<>();

        @Override
        public <T, G extends Gauge<T>> G gauge(String name, G gauge) {
            gauges.put(name, gauge);
            return gauge;
        }
    }

    /**
     * The run restores changelog handles, so Flink wraps this backend in its {@code
     * DeactivatedChangelogStateBackend}, which cannot create an asynchronous keyed backend: it must
     * not claim to support one even when the delegate (ForSt) does, so that operators using the
     * asynchronous state API get Flink's synchronous adaptor, as with changelog on. Found in a
     * review: a NO_CLAIM resume with ForSt and asynchronous state failed on every attempt.
     */
    @Test
    void doesNotOfferTheAsyncStateApi_evenWhenTheDelegateDoes() {
        StateBackend asyncCapable =
                new HashMapStateBackend() {
                    @Override
                    public boolean supportsAsyncKeyedStateBackend() {
                        return true;
                    }
                };
        assertThat(
                        new ChangelogOffStateBackend(asyncCapable, "test")
                                .supportsAsyncKeyedStateBackend())
                .isFalse();
    }

    @Test
    void keyedBackend_isTheDelegates_andReportsChangelogOffWithTheReason() throws Exception {
        String reason = "resumed from 'file:///cp/chk-7' in NO_CLAIM mode";
        ChangelogOffStateBackend backend =
                new ChangelogOffStateBackend(new HashMapStateBackend(), reason);
        GaugeCapture metrics = new GaugeCapture();
        MockEnvironment env = new MockEnvironmentBuilder().build();
        CheckpointableKeyedStateBackend<Integer> keyed =
                backend.createKeyedStateBackend(
                        new KeyedStateBackendParametersImpl<>(
                                env,
                                new JobID(),
                                "op",
                                IntSerializer.INSTANCE,
                                4,
                                KeyGroupRange.of(0, 3),
                                env.getTaskKvStateRegistry(),
                                TtlTimeProvider.DEFAULT,
                                metrics,
                                List.of(),
                                new CloseableRegistry()));
        try {
            assertThat(keyed).isInstanceOf(HeapKeyedStateBackend.class);
            assertThat(metrics.gauges.get(ChangelogOffStateBackend.ENABLED_GAUGE).getValue())
                    .isEqualTo(0);
            assertThat(metrics.gauges.get(ChangelogOffStateBackend.REASON_GAUGE).getValue())
                    .isEqualTo(reason);
            assertThat(backend.supportsNoClaimRestoreMode()).isTrue();
            assertThat(backend.getName()).isEqualTo(new HashMapStateBackend().getName());
        } finally {
            keyed.dispose();
            env.close();
        }
    }
}
