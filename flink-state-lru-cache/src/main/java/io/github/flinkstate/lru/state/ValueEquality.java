package io.github.flinkstate.lru.state;

/**
 * Whether objects of a class compare by value: the cache finds map entries by {@code equals} and
 * {@code hashCode}, which for arrays and for classes that keep {@code Object}'s methods is
 * identity, while RocksDB compares the serialized bytes. Answered once per class (Java's {@link
 * ClassValue}).
 *
 * <p>Thread safety: thread-safe.
 */
final class ValueEquality {

    private static final ClassValue<Boolean> BY_VALUE =
            new ClassValue<>() {
                @Override
                protected Boolean computeValue(Class<?> type) {
                    if (type.isArray()) {
                        return false;
                    }
                    try {
                        return type.getMethod("equals", Object.class).getDeclaringClass()
                                != Object.class;
                    } catch (NoSuchMethodException e) {
                        return false; // cannot happen: every class has a public equals
                    }
                }
            };

    private ValueEquality() {}

    /** True if instances of {@code type} are equal when their contents are. */
    static boolean of(Class<?> type) {
        return BY_VALUE.get(type);
    }
}
