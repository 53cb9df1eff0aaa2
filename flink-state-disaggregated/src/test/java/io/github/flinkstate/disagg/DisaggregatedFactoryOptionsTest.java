package io.github.flinkstate.disagg;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.sst.BlockCompression;
import java.time.Duration;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.junit.jupiter.api.Test;

/**
 * Every option set in the cluster configuration reaches the backend the factory creates (the
 * periodic compaction time of the TTL filter used to be dropped, so a value in config.yaml had no
 * effect).
 */
class DisaggregatedFactoryOptionsTest {

    @Test
    void everyOptionInTheConfiguration_reachesTheBackend() {
        Configuration c = new Configuration();
        c.set(DisaggregatedOptions.PRIMARY_DIRECTORY, "file:///tmp/primary");
        c.set(DisaggregatedOptions.LOCAL_DIRECTORY, "/tmp/local");
        c.set(DisaggregatedOptions.MEMORY_PER_SLOT, MemorySize.parse("300mb"));
        c.set(DisaggregatedOptions.WRITE_BUFFER_RATIO, 0.4);
        c.set(DisaggregatedOptions.ROW_CACHE_RATIO, 0.3);
        c.set(DisaggregatedOptions.MEMTABLE_SIZE, MemorySize.parse("8mb"));
        c.set(DisaggregatedOptions.BLOCK_CACHE_SIZE, MemorySize.parse("32mb"));
        c.set(DisaggregatedOptions.LOCAL_CACHE_SIZE, MemorySize.parse("3gb"));
        c.set(DisaggregatedOptions.LOCAL_CACHE_RESERVE, MemorySize.parse("5gb"));
        c.set(DisaggregatedOptions.LOCAL_CACHE_WARM_UP, false);
        c.set(DisaggregatedOptions.LOCAL_CACHE_WARM_UP_HINT, false);
        c.set(DisaggregatedOptions.LOCAL_CACHE_MMAP, false);
        c.set(DisaggregatedOptions.LOCAL_CACHE_WARM_UP_RATE_LIMIT, MemorySize.parse("20mb"));
        c.set(DisaggregatedOptions.BACKGROUND_THREADS, 1);
        c.set(DisaggregatedOptions.TTL_PERIODIC_COMPACTION_TIME, Duration.ofHours(2));
        c.set(DisaggregatedOptions.COPY_THREADS, 7);
        c.set(DisaggregatedOptions.COMPRESSION, BlockCompression.LZ4);
        c.set(DisaggregatedOptions.READAHEAD_SIZE, MemorySize.parse("4mb"));
        c.set(DisaggregatedOptions.COMPACTION_RATE_LIMIT, MemorySize.parse("50mb"));
        c.set(DisaggregatedOptions.BACKGROUND_COPY, false);
        DisaggregatedStateBackend b =
                new DisaggregatedStateBackendFactory()
                        .createFromConfig(c, getClass().getClassLoader());
        for (var option : DisaggregatedOptions.all()) {
            assertThat(b.option(option)).as(option.key()).isEqualTo(c.get(option));
        }
        assertThat(DisaggregatedOptions.all()).hasSize(20);
    }
}
