package io.github.flinkstate.benchmarks.scenario.rescale;

import java.util.SplittableRandom;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;

/**
 * The scenario's state: one {@code ValueState<byte[]>} per key whose value is a pure function of
 * the key, so a restored job can check every value without carrying the expected data along.
 * Stateless.
 *
 * <p>Invariant: {@code expected(k, n)} is the same on every call and in every JVM; its bytes are
 * pseudo-random (incompressible, so checkpoint size tracks state size) and differ between keys.
 */
public final class StateValues {

    /** State name; the load and the verify job must use the same one. */
    public static final String STATE_NAME = "value";

    private StateValues() {}

    public static ValueStateDescriptor<byte[]> descriptor() {
        return new ValueStateDescriptor<>(
                STATE_NAME, PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO);
    }

    /** The value key {@code key} must hold: {@code valueBytes} bytes seeded by the key. */
    public static byte[] expected(long key, int valueBytes) {
        byte[] v = new byte[valueBytes];
        new SplittableRandom(key * 0x9E3779B97F4A7C15L + 0x5DEECE66DL).nextBytes(v);
        return v;
    }
}
