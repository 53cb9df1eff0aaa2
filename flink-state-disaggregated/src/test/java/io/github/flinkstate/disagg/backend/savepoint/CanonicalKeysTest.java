package io.github.flinkstate.disagg.backend.savepoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.disagg.backend.KeyLayout;
import java.io.IOException;
import java.util.stream.Stream;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.runtime.state.SerializedCompositeKeyBuilder;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link CanonicalKeys} against Flink's own {@link SerializedCompositeKeyBuilder} (the builder of
 * RocksDB keys, which are the canonical savepoint keys): for fixed and variable-sized keys and
 * namespaces (lengths written only when both are variable-sized, also lengths above 255 bytes), one
 * and two key-group bytes, with and without a map user key, in both directions.
 */
class CanonicalKeysTest {

    private static final String LONG_TEXT = "x".repeat(300);

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of(
                        128,
                        IntSerializer.INSTANCE,
                        7,
                        VoidNamespaceSerializer.INSTANCE,
                        VoidNamespace.INSTANCE),
                Arguments.of(128, StringSerializer.INSTANCE, "k", StringSerializer.INSTANCE, "ns"),
                Arguments.of(
                        32768,
                        StringSerializer.INSTANCE,
                        LONG_TEXT,
                        StringSerializer.INSTANCE,
                        LONG_TEXT + "n"),
                Arguments.of(1000, StringSerializer.INSTANCE, "key", LongSerializer.INSTANCE, 42L),
                Arguments.of(
                        1000, LongSerializer.INSTANCE, -3L, StringSerializer.INSTANCE, LONG_TEXT));
    }

    @ParameterizedTest(name = "max parallelism {0}, key {2}")
    @MethodSource("cases")
    @SuppressWarnings({"unchecked", "rawtypes"})
    void keys_matchFlinksCompositeKeys_andConvertBack(
            int maxParallelism,
            TypeSerializer keySerializer,
            Object key,
            TypeSerializer nsSerializer,
            Object namespace)
            throws IOException {
        CanonicalKeys keys = new CanonicalKeys(maxParallelism);
        int keyGroup = maxParallelism - 1;
        int stateId = KeyLayout.stateId("some-state");
        boolean ambiguous = CanonicalKeys.ambiguous(keySerializer, nsSerializer);
        KeyLayout layout = new KeyLayout();
        byte[] enginePrefix =
                layout.prefix(keyGroup, stateId, key, keySerializer, namespace, nsSerializer);
        byte[] engineMapKey = layout.withSuffix(enginePrefix, LONG_TEXT, StringSerializer.INSTANCE);
        byte[] engineListKey = layout.withSuffix(enginePrefix, 17L, LongSerializer.INSTANCE);

        SerializedCompositeKeyBuilder flink =
                new SerializedCompositeKeyBuilder(keySerializer, keys.prefixBytes(), 32);
        flink.setKeyAndKeyGroup(key, keyGroup);
        byte[] expected = flink.buildCompositeKeyNamespace(namespace, nsSerializer);
        byte[] expectedMap =
                flink.buildCompositeKeyNamesSpaceUserKey(
                        namespace, nsSerializer, LONG_TEXT, StringSerializer.INSTANCE);

        assertThat(keys.toCanonical(enginePrefix, keyGroup, ambiguous, false)).isEqualTo(expected);
        assertThat(keys.toCanonical(engineListKey, keyGroup, ambiguous, false))
                .as("a list element's append sequence is dropped")
                .isEqualTo(expected);
        assertThat(keys.toCanonical(engineMapKey, keyGroup, ambiguous, true))
                .isEqualTo(expectedMap);

        assertThat(
                        keys.toEngine(
                                expected,
                                keyGroup,
                                stateId,
                                keySerializer,
                                nsSerializer,
                                ambiguous,
                                false))
                .isEqualTo(enginePrefix);
        assertThat(
                        keys.toEngine(
                                expectedMap,
                                keyGroup,
                                stateId,
                                keySerializer,
                                nsSerializer,
                                ambiguous,
                                true))
                .isEqualTo(engineMapKey);
        assertThatThrownBy(
                        () ->
                                keys.toEngine(
                                        expectedMap,
                                        keyGroup,
                                        stateId,
                                        keySerializer,
                                        nsSerializer,
                                        ambiguous,
                                        false))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("unexpected byte(s) after the namespace");
    }
}
