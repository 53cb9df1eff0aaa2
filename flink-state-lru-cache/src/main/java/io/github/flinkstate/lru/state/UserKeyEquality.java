package io.github.flinkstate.lru.state;

import java.util.HashMap;
import java.util.Map;
import org.apache.flink.api.common.typeutils.TypeSerializer;

/**
 * Whether the user keys of one map state compare by value the way the delegate compares them: the
 * cache finds map entries by {@code equals} and {@code hashCode}, RocksDB by the serialized bytes.
 * A class must declare its own {@code equals} ({@link ValueEquality}), and a serializer copy of its
 * keys must equal the key with the same hash: this also catches classes whose {@code equals}
 * compares a component by identity (a {@code Tuple2} or a record with an array field). Each class
 * is checked on its first {@value #CHECKS_PER_CLASS} keys (a null field in one key proves little),
 * then trusted.
 *
 * <p>Thread safety: task thread only (one instance per map state).
 */
final class UserKeyEquality {

    /** Keys of one class checked before the class is trusted. */
    static final int CHECKS_PER_CLASS = 16;

    /** The class of the last key that completed its checks: the common case, one comparison. */
    private Class<?> trusted;

    private final Map<Class<?>, Integer> passed = new HashMap<>();

    /** True if {@code key} (not null) compares by value; may copy it once with {@code keys}. */
    boolean byValue(Object key, TypeSerializer<Object> keys) {
        Class<?> type = key.getClass();
        if (type == trusted) {
            return true;
        }
        if (!ValueEquality.of(type)) {
            return false;
        }
        Object copy = keys.copy(key);
        if (copy != key && (!copy.equals(key) || copy.hashCode() != key.hashCode())) {
            return false;
        }
        if (passed.merge(type, 1, Integer::sum) >= CHECKS_PER_CLASS) {
            trusted = type;
        }
        return true;
    }
}
