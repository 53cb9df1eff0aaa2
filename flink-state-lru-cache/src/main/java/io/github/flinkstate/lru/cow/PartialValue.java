package io.github.flinkstate.lru.cow;

import org.apache.flink.api.common.typeutils.TypeSerializer;

/**
 * A cached value that holds only changes on top of the delegate's value, not the whole value: for
 * list state, the elements appended to a list the cache has not read (see {@code
 * io.github.flinkstate.lru.state.PendingAppends}).
 *
 * <p>Invariants: an entry with a partial value is always dirty (the delegate lacks the changes).
 * Writing it back applies the changes to the delegate's value, after which the entry is removed
 * from the cache rather than marked clean ({@link CowLruMap#markClean}), because a clean entry must
 * equal the delegate's whole value. Snapshots write it as changes, not as the value.
 *
 * <p>Thread safety: like every cached value, mutated by the task thread only, and only when the
 * entry's value is private ({@link CowLruMap#privateValue}), because snapshots read it.
 */
public interface PartialValue {

    /**
     * An independent deep copy that the task may change while a snapshot reads this one.
     *
     * @param serializer the state's value serializer (for lists: the list serializer)
     */
    PartialValue copy(TypeSerializer<Object> serializer);
}
