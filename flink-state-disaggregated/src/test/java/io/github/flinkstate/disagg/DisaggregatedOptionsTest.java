package io.github.flinkstate.disagg;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.MemorySize;
import org.junit.jupiter.api.Test;

/** Option validation: a bad value fails at start naming the option. */
class DisaggregatedOptionsTest {

    private static Configuration periodic(Duration d) {
        Configuration c = new Configuration();
        c.set(DisaggregatedOptions.TTL_PERIODIC_COMPACTION_TIME, d);
        return c;
    }

    @Test
    void periodicCompactionTime_isOffOrAtLeastOneMinute() {
        assertThatCode(() -> DisaggregatedOptions.validate(periodic(Duration.ZERO)))
                .doesNotThrowAnyException();
        assertThatCode(() -> DisaggregatedOptions.validate(periodic(Duration.ofHours(1))))
                .doesNotThrowAnyException();
        for (Duration bad : new Duration[] {Duration.ofSeconds(30), Duration.ofMillis(-1)}) {
            assertThatThrownBy(() -> DisaggregatedOptions.validate(periodic(bad)))
                    .isInstanceOf(IllegalConfigurationException.class)
                    .hasMessageContaining(
                            "'state.backend.disaggregated.ttl.periodic-compaction-time'");
        }
    }

    @Test
    void localCacheSize_isOffOrAtLeastOneMebibyte() {
        for (String ok : new String[] {"0", "1mb", "10gb"}) {
            Configuration c = new Configuration();
            c.set(DisaggregatedOptions.LOCAL_CACHE_SIZE, MemorySize.parse(ok));
            assertThatCode(() -> DisaggregatedOptions.validate(c)).doesNotThrowAnyException();
        }
        Configuration bad = new Configuration();
        bad.set(DisaggregatedOptions.LOCAL_CACHE_SIZE, MemorySize.parse("512kb"));
        assertThatThrownBy(() -> DisaggregatedOptions.validate(bad))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("'state.backend.disaggregated.local-cache.size'")
                .hasMessageContaining("at least 1 MiB");
    }

    @Test
    void readaheadSize_isAtMost64Mebibytes() {
        for (String ok : new String[] {"0", "2mb", "64mb"}) {
            Configuration c = new Configuration();
            c.set(DisaggregatedOptions.READAHEAD_SIZE, MemorySize.parse(ok));
            assertThatCode(() -> DisaggregatedOptions.validate(c)).doesNotThrowAnyException();
        }
        Configuration bad = new Configuration();
        bad.set(DisaggregatedOptions.READAHEAD_SIZE, MemorySize.parse("65mb"));
        assertThatThrownBy(() -> DisaggregatedOptions.validate(bad))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("'state.backend.disaggregated.readahead-size'")
                .hasMessageContaining("at most 64 MiB");
    }

    @Test
    void slotMemory_isAtLeastFourMebibytes_andItsWriteBufferRatioBounded() {
        Configuration ok = new Configuration();
        ok.set(DisaggregatedOptions.MEMORY_PER_SLOT, MemorySize.parse("4mb"));
        ok.set(DisaggregatedOptions.WRITE_BUFFER_RATIO, 0.9);
        assertThatCode(() -> DisaggregatedOptions.validate(ok)).doesNotThrowAnyException();

        Configuration small = new Configuration();
        small.set(DisaggregatedOptions.MEMORY_PER_SLOT, MemorySize.parse("3mb"));
        assertThatThrownBy(() -> DisaggregatedOptions.validate(small))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("'state.backend.disaggregated.memory.per-slot'")
                .hasMessageContaining("at least 4 MiB");
        for (double bad : new double[] {0.0, 0.01, 0.95, 1.5}) {
            Configuration c = new Configuration();
            c.set(DisaggregatedOptions.WRITE_BUFFER_RATIO, bad);
            assertThatThrownBy(() -> DisaggregatedOptions.validate(c))
                    .isInstanceOf(IllegalConfigurationException.class)
                    .hasMessageContaining(
                            "'state.backend.disaggregated.memory.write-buffer-ratio'");
        }
        for (double bad : new double[] {-0.1, 0.95}) {
            Configuration c = new Configuration();
            c.set(DisaggregatedOptions.ROW_CACHE_RATIO, bad);
            assertThatThrownBy(() -> DisaggregatedOptions.validate(c))
                    .isInstanceOf(IllegalConfigurationException.class)
                    .hasMessageContaining("'state.backend.disaggregated.memory.row-cache-ratio'")
                    .hasMessageContaining("between 0 and 0.9");
        }
        Configuration tinyCache = new Configuration();
        tinyCache.set(DisaggregatedOptions.BLOCK_CACHE_SIZE, MemorySize.parse("100kb"));
        assertThatThrownBy(() -> DisaggregatedOptions.validate(tinyCache))
                .hasMessageContaining("'state.backend.disaggregated.block-cache-size'");
    }
}
