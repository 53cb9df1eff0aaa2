package io.github.flinkstate.disagg.backend.timer;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueElement;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueSnapshotRestoreWrapper;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueStateSnapshot;

/**
 * The timer section of the meta stream (docs/format/disagg-checkpoint-meta.md): per priority queue
 * its name, then per non-empty key group {@code u32 keyGroup, u32 count, elements}, ended by key
 * group -1. Timers live in Flink's heap priority queues; they are written into the backend's own
 * snapshot because Flink's changelog wrapper never asks for legacy timer snapshots.
 *
 * <p>Thread safety: stateless.
 */
public final class TimerSnapshotFormat {

    private TimerSnapshotFormat() {}

    public static void write(
            DataOutputView out, List<HeapPriorityQueueStateSnapshot<?>> queues, KeyGroupRange range)
            throws IOException {
        out.writeInt(queues.size());
        for (HeapPriorityQueueStateSnapshot<?> q : queues) {
            writeQueue(out, q, range);
        }
    }

    private static <T> void writeQueue(
            DataOutputView out, HeapPriorityQueueStateSnapshot<T> q, KeyGroupRange range)
            throws IOException {
        out.writeUTF(q.getMetaInfo().getName());
        TypeSerializer<T> ser = q.getMetaInfo().getElementSerializer();
        for (int kg = range.getStartKeyGroup(); kg <= range.getEndKeyGroup(); kg++) {
            List<T> elements = new ArrayList<>();
            Iterator<T> it = q.getIteratorForKeyGroup(kg);
            while (it.hasNext()) {
                elements.add(it.next());
            }
            if (elements.isEmpty()) {
                continue;
            }
            out.writeInt(kg);
            out.writeInt(elements.size());
            for (T e : elements) {
                ser.serialize(e, out);
            }
        }
        out.writeInt(-1);
    }

    /**
     * Reads the section into the registered queues, keeping only elements of {@code range} (a
     * rescaled restore reads handles that cover other key groups too).
     */
    public static void read(
            DataInputView in,
            Map<String, HeapPriorityQueueSnapshotRestoreWrapper<?>> queues,
            KeyGroupRange range)
            throws IOException {
        int n = in.readInt();
        for (int i = 0; i < n; i++) {
            String name = in.readUTF();
            HeapPriorityQueueSnapshotRestoreWrapper<?> q = queues.get(name);
            if (q == null) {
                throw new IOException("Timer queue " + name + " has no meta info in the snapshot");
            }
            readQueue(in, q, range);
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static void readQueue(
            DataInputView in, HeapPriorityQueueSnapshotRestoreWrapper q, KeyGroupRange range)
            throws IOException {
        TypeSerializer<Object> ser = q.getMetaInfo().getElementSerializer();
        while (true) {
            int kg = in.readInt();
            if (kg < 0) {
                return;
            }
            int count = in.readInt();
            boolean keep = range.contains(kg);
            for (int j = 0; j < count; j++) {
                Object e = ser.deserialize(in);
                if (keep) {
                    q.getPriorityQueue().add((HeapPriorityQueueElement) e);
                }
            }
        }
    }
}
