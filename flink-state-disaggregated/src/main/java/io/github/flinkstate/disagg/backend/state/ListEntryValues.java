package io.github.flinkstate.disagg.backend.state;

import java.io.IOException;
import java.util.List;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * The value of one list-state engine entry (docs/disaggregated.md, "Key layout"): one or more
 * elements in the element serializer's bytes, separated by one delimiter byte {@code ','} (the
 * layout of a list value in Flink's canonical savepoints and RocksDB). An entry written by {@code
 * add} holds one element and so no delimiter; {@code addAll} and {@code update} of states without
 * TTL write all their elements as one entry, one engine write instead of one per element. Entries
 * of TTL states hold one element each, because the TTL compaction filter judges an entry by its
 * first element's timestamp.
 *
 * <p>Readers deserialize elements one after the other (a serializer reads exactly what it wrote)
 * and expect the delimiter between them, so values written before entries could hold several
 * elements read the same way.
 *
 * <p>Thread safety: stateless static helpers.
 */
final class ListEntryValues {

    static final byte DELIMITER = ',';

    private ListEntryValues() {}

    /** Appends the elements held by {@code value} to {@code out}. */
    static <V> void readInto(byte[] value, TypeSerializer<V> serializer, List<V> out)
            throws IOException {
        DataInputDeserializer in = new DataInputDeserializer(value);
        out.add(serializer.deserialize(in));
        while (in.available() > 0) {
            byte d = in.readByte();
            if (d != DELIMITER) {
                throw new IOException(
                        "Corrupt list entry: expected the delimiter ',' after an element at byte "
                                + (in.getPosition() - 1)
                                + " of "
                                + value.length
                                + ", found "
                                + d);
            }
            out.add(serializer.deserialize(in));
        }
    }

    /** One entry value holding {@code values} (not empty, no null element). */
    static <V> byte[] write(List<V> values, TypeSerializer<V> serializer) throws IOException {
        DataOutputSerializer out = new DataOutputSerializer(16 * values.size() + 16);
        for (int i = 0; i < values.size(); i++) {
            if (i > 0) {
                out.writeByte(DELIMITER);
            }
            serializer.serialize(values.get(i), out);
        }
        return out.getCopyOfBuffer();
    }
}
