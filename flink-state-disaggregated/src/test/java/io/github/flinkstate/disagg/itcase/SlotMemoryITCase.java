package io.github.flinkstate.disagg.itcase;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.DisaggregatedStateBackendFactory;
import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * In a real task slot, the disaggregated backends of two keyed operators share the slot's memory:
 * both report the slot's block cache capacity and memtable share from {@code memory.per-slot}, and
 * the shared memtable budget makes both flush although neither memtable reaches its own (64 MiB)
 * size and no checkpoint runs. Read through Flink's metrics, as an operator would.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class SlotMemoryITCase {

    private static final long SLOT_MEMORY = 16L << 20;
    private static final long MEMTABLE_SHARE = SLOT_MEMORY / 4;
    private static final int VALUE_BYTES = 1024;

    @TempDir File tmp;

    @Test
    void twoKeyedOperatorsInOneSlot_shareItsMemory_andTheSharedBudgetFlushesBoth()
            throws Exception {
        InMemoryReporter reporter = InMemoryReporter.createWithRetainedMetrics();
        Configuration clusterConfig = reporter.addToConfiguration(new Configuration());
        try (MiniCluster cluster =
                new MiniCluster(
                        new MiniClusterConfiguration.Builder()
                                .setConfiguration(clusterConfig)
                                .setNumTaskManagers(1)
                                .setNumSlotsPerTaskManager(1)
                                .build())) {
            cluster.start();
            JobGraph graph = jobGraph();
            JobID id = cluster.submitJob(graph).get().getJobID();

            Waits.untilChecked(
                    "both operators flushed twice",
                    Duration.ofSeconds(120),
                    () -> {
                        List<Gauge<Long>> flushes = gauges(reporter, id, "flushes");
                        assertThat(flushes).hasSizeLessThanOrEqualTo(2);
                        // each backend's memtables stay within the share (one memtable being
                        // filled, at most two waiting for their flush, each closed at the share
                        // plus one entry)
                        for (Gauge<Long> memtable : gauges(reporter, id, "memtableBytes")) {
                            assertThat(memtable.getValue())
                                    .isLessThanOrEqualTo(3 * (MEMTABLE_SHARE + 2 * VALUE_BYTES));
                        }
                        return flushes.size() == 2 && minimum(flushes) >= 2;
                    });
            for (Gauge<Long> capacity : gauges(reporter, id, "blockCacheSlotCapacityBytes")) {
                assertThat(capacity.getValue()).isEqualTo(SLOT_MEMORY - MEMTABLE_SHARE);
            }
            List<Gauge<Long>> limits = gauges(reporter, id, "memtableSlotLimitBytes");
            assertThat(limits).hasSize(2);
            for (Gauge<Long> limit : limits) {
                assertThat(limit.getValue()).isEqualTo(MEMTABLE_SHARE);
            }
            cluster.cancelJob(id).get();
        }
    }

    private static long minimum(List<Gauge<Long>> gauges) {
        return gauges.stream().mapToLong(Gauge::getValue).min().orElse(0);
    }

    /** The gauges named {@code name} of the job's two stateful operators. */
    @SuppressWarnings("unchecked")
    private static List<Gauge<Long>> gauges(InMemoryReporter reporter, JobID id, String name) {
        List<Gauge<Long>> found = new ArrayList<>();
        for (Map.Entry<String, Metric> e : reporter.findMetrics(id, name).entrySet()) {
            if (e.getKey().endsWith("disaggregated." + name)) {
                found.add((Gauge<Long>) e.getValue());
            }
        }
        return found;
    }

    private JobGraph jobGraph() {
        Configuration config = new Configuration();
        config.setString("state.backend.type", DisaggregatedStateBackendFactory.class.getName());
        config.setString(
                "execution.checkpointing.dir", new File(tmp, "checkpoints").toURI().toString());
        config.setString("state.backend.disaggregated.memory.per-slot", SLOT_MEMORY + "b");
        config.setString("state.backend.disaggregated.memory.write-buffer-ratio", "0.25");
        config.setString("state.backend.disaggregated.memtable-size", "64mb");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
        env.setParallelism(1);
        env.fromSequence(0, Long.MAX_VALUE)
                .keyBy(x -> x % 20_000)
                .map(new Remember())
                .name("first")
                .keyBy(x -> x % 30_000)
                .map(new Remember())
                .name("second")
                .sinkTo(new DiscardingSink<>());
        return env.getStreamGraph().getJobGraph();
    }

    /** Stores a 1 KiB value per record under its key; slowed down so the test does not hog CPU. */
    private static final class Remember extends RichMapFunction<Long, Long> {
        private transient ValueState<byte[]> last;

        @Override
        public void open(OpenContext context) {
            last = getRuntimeContext().getState(new ValueStateDescriptor<>("last", byte[].class));
        }

        @Override
        public Long map(Long x) throws Exception {
            byte[] v = new byte[VALUE_BYTES];
            v[0] = (byte) x.longValue();
            last.update(v);
            if (x % 10 == 0) {
                Thread.sleep(1);
            }
            return x;
        }
    }
}
