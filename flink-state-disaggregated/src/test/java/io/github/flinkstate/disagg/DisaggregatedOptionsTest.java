package io.github.flinkstate.disagg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
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

    /**
     * Every option the class declares is in {@code all()}, which the backend copies from the job's
     * configuration and the reference lists: the warm-up hint option was declared without it, and
     * setting it changed nothing.
     */
    @Test
    void everyDeclaredOption_isInAll() throws Exception {
        java.util.List<Object> declared = new java.util.ArrayList<>();
        for (java.lang.reflect.Field f : DisaggregatedOptions.class.getFields()) {
            if (f.getType() == org.apache.flink.configuration.ConfigOption.class) {
                declared.add(f.get(null));
            }
        }
        assertThat(declared).isNotEmpty();
        assertThat(DisaggregatedOptions.all())
                .containsExactlyInAnyOrderElementsOf(
                        declared.stream()
                                .map(o -> (org.apache.flink.configuration.ConfigOption<?>) o)
                                .toList());
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

    /**
     * Sizes given without a unit are bytes: "512" for the readahead behaved as no readahead and
     * "256" for the free-space reserve as no reserve, silently.
     */
    @Test
    void readaheadAndReserve_areOffOrAtLeastAUsefulSize() {
        for (String[] ok :
                new String[][] {{"0", "0"}, {"4kb", "1mb"}, {"32kb", "1mb"}, {"2mb", "256mb"}}) {
            Configuration c = new Configuration();
            c.set(DisaggregatedOptions.READAHEAD_SIZE, MemorySize.parse(ok[0]));
            c.set(DisaggregatedOptions.LOCAL_CACHE_RESERVE, MemorySize.parse(ok[1]));
            assertThatCode(() -> DisaggregatedOptions.validate(c)).doesNotThrowAnyException();
        }
        Configuration readahead = new Configuration();
        readahead.set(DisaggregatedOptions.READAHEAD_SIZE, MemorySize.parse("512"));
        assertThatThrownBy(() -> DisaggregatedOptions.validate(readahead))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("'state.backend.disaggregated.readahead-size'")
                .hasMessageContaining("512");
        Configuration reserve = new Configuration();
        reserve.set(DisaggregatedOptions.LOCAL_CACHE_RESERVE, MemorySize.parse("256"));
        assertThatThrownBy(() -> DisaggregatedOptions.validate(reserve))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("'state.backend.disaggregated.local-cache.reserve'")
                .hasMessageContaining("256");
    }

    /**
     * A primary directory that is relative (resolved against each TaskManager's working directory,
     * so handles name files a restore elsewhere cannot find) or on a file system Flink has no
     * implementation for (a plugin not installed) fails at start naming the option, instead of on
     * the TaskManagers when the backend is built.
     */
    @Test
    void primaryDirectory_isAbsoluteAndOnAFileSystemFlinkHas() {
        for (String[] bad :
                new String[][] {
                    {"state/primary", "absolute"}, {"nosuchfs://host/primary", "No file system"}
                }) {
            Configuration c = new Configuration();
            c.set(DisaggregatedOptions.PRIMARY_DIRECTORY, bad[0]);
            assertThatThrownBy(() -> DisaggregatedOptions.validate(c))
                    .as(bad[0])
                    .isInstanceOf(IllegalConfigurationException.class)
                    .hasMessageContaining("'state.backend.disaggregated.primary-dir'")
                    .hasMessageContaining(bad[1]);
        }
        Configuration ok = new Configuration();
        ok.set(DisaggregatedOptions.PRIMARY_DIRECTORY, "file:///tmp/primary");
        assertThatCode(() -> DisaggregatedOptions.validate(ok)).doesNotThrowAnyException();
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
                .hasMessageContaining("and 64 MiB");
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

    /**
     * A rate limit given without a unit is bytes: "10" throttled compactions to 10 bytes a second,
     * so level 0 filled up and every write then waited for ever (found in a review).
     */
    @Test
    void rateLimits_areOffOrLargeEnoughToMakeProgress() {
        for (String ok : new String[] {"0", "1mb", "100mb"}) {
            Configuration c = new Configuration();
            c.setString(DisaggregatedOptions.COMPACTION_RATE_LIMIT.key(), ok);
            c.setString(DisaggregatedOptions.LOCAL_CACHE_WARM_UP_RATE_LIMIT.key(), ok);
            assertThatCode(() -> DisaggregatedOptions.validate(c)).doesNotThrowAnyException();
        }
        for (String bad : new String[] {"10", "500kb"}) {
            Configuration c = new Configuration();
            c.setString(DisaggregatedOptions.COMPACTION_RATE_LIMIT.key(), bad);
            assertThatThrownBy(() -> DisaggregatedOptions.validate(c))
                    .isInstanceOf(IllegalConfigurationException.class)
                    .hasMessageContaining(DisaggregatedOptions.COMPACTION_RATE_LIMIT.key());
        }
        Configuration c = new Configuration();
        c.setString(DisaggregatedOptions.LOCAL_CACHE_WARM_UP_RATE_LIMIT.key(), "10");
        assertThatThrownBy(() -> DisaggregatedOptions.validate(c))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining(DisaggregatedOptions.LOCAL_CACHE_WARM_UP_RATE_LIMIT.key());
    }

    /**
     * The local directory is a directory of this machine: a file: URI names it like a path (it used
     * to become a relative directory called "file:" under the TaskManager's working directory), and
     * a URI of another file system is refused (found in a review).
     */
    @Test
    void localDirectory_isAPathOrAFileUri() {
        assertThat(DisaggregatedOptions.localDirectory("file:///mnt/ssd/flink"))
                .isEqualTo(new File("/mnt/ssd/flink"));
        assertThat(DisaggregatedOptions.localDirectory("/mnt/ssd/flink"))
                .isEqualTo(new File("/mnt/ssd/flink"));
        Configuration c = new Configuration();
        c.set(DisaggregatedOptions.LOCAL_DIRECTORY, "hdfs://namenode/flink");
        assertThatThrownBy(() -> DisaggregatedOptions.validate(c))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining(DisaggregatedOptions.LOCAL_DIRECTORY.key());
    }
}
