package io.github.flinkstate.disagg.backend;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * The bloom prefix of engine keys is the whole (key group, state, key, namespace) prefix, also for
 * keys with a suffix, and nothing for anything shorter: the soundness rule of {@code
 * LsmOptions.bloomPrefix}.
 */
class KeyLayoutBloomPrefixTest {

    @Test
    void wholePrefix_andKeysWithSuffix_haveThePrefixLength() {
        KeyLayout layout = new KeyLayout();
        byte[] prefix =
                layout.prefix(
                        17, 42, "user-7", StringSerializer.INSTANCE, 3L, LongSerializer.INSTANCE);
        assertThat(KeyLayout.bloomPrefixLength(prefix)).isEqualTo(prefix.length);
        byte[] mapKey = layout.withSuffix(prefix, "user-key", StringSerializer.INSTANCE);
        assertThat(KeyLayout.bloomPrefixLength(mapKey)).isEqualTo(prefix.length);
        byte[] listEntry = Arrays.copyOf(prefix, prefix.length + 8);
        assertThat(KeyLayout.bloomPrefixLength(listEntry)).isEqualTo(prefix.length);
    }

    @Test
    void shorterOrMalformedKeys_haveNone() {
        KeyLayout layout = new KeyLayout();
        byte[] prefix =
                layout.prefix(1, 2, "k", StringSerializer.INSTANCE, 0L, LongSerializer.INSTANCE);
        assertThat(KeyLayout.bloomPrefixLength(KeyLayout.statePrefix(1, 2))).isEqualTo(-1);
        for (int len = 0; len < prefix.length; len++) {
            assertThat(KeyLayout.bloomPrefixLength(Arrays.copyOf(prefix, len)))
                    .as("truncated to %d bytes", len)
                    .isEqualTo(-1);
        }
        byte[] huge = Arrays.copyOf(KeyLayout.statePrefix(1, 2), 12);
        huge[6] = (byte) 0xFF; // a key length of about 4 GiB
        assertThat(KeyLayout.bloomPrefixLength(huge)).isEqualTo(-1);
    }
}
