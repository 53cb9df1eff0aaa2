package io.github.flinkstate.disagg.backend.savepoint;

import io.github.flinkstate.disagg.backend.KeyLayout;
import io.github.flinkstate.disagg.engine.LsmReadSnapshot;
import io.github.flinkstate.disagg.engine.iterator.LsmIterator;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.key.KeyRange;
import java.io.IOException;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyValueStateIterator;
import org.apache.flink.runtime.state.StateSnapshotTransformer;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueStateSnapshot;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The entries of a canonical savepoint, read from an engine read snapshot and a copy of the timer
 * queues, in the order Flink's {@code FullSnapshotAsyncWriter} needs: key group by key group; in
 * each key group every keyed state's entries contiguously (in engine order, i.e. by state id), then
 * every timer queue's elements.
 *
 * <p>Entries as the canonical format expects them (docs/disaggregated.md, "Savepoints"):
 *
 * <ul>
 *   <li>value, reducing, aggregating state: canonical key, the stored value bytes;
 *   <li>map state: one entry per user key, canonical key followed by the user key bytes, the stored
 *       value (null flag and value) as is;
 *   <li>list state: one entry per (key, namespace): the engine's element entries joined with
 *       Flink's list delimiter (one byte {@code ','}), the append sequences dropped;
 *   <li>timers: key group and the element as its serializer writes it, an empty value.
 * </ul>
 *
 * <p>A state's snapshot transformer (TTL's cleanup in full snapshots) filters values, list elements
 * and map values; a list left without elements and a filtered value or map entry are not written.
 *
 * <p>One engine iterator walks the whole range forward without a seek: key groups without entries
 * cost nothing but a comparison.
 *
 * <p>Thread safety: single-threaded (the savepoint's asynchronous part).
 */
final class CanonicalStateIterator implements KeyValueStateIterator {

    private static final Logger LOG = LoggerFactory.getLogger(CanonicalStateIterator.class);
    private static final byte LIST_DELIMITER = ',';
    private static final byte[] EMPTY = new byte[0];

    private final LsmIterator engine;
    private final int lastKeyGroup;
    private final CanonicalKeys keys;
    private final Map<Integer, CanonicalSavepointResources.KvState> kvStates;
    private final List<HeapPriorityQueueStateSnapshot<?>> timers;
    private final int firstTimerId;
    private final DataOutputSerializer listOut = new DataOutputSerializer(256);

    private int keyGroup;
    private boolean inTimers;
    private int timerQueue;
    private Iterator<?> timerElements;

    private boolean valid;
    private int currentKeyGroup = -1;
    private int currentStateId = -1;
    private byte[] currentKey;
    private byte[] currentValue;
    private boolean newKeyGroup;
    private boolean newState;
    private int unknownStateEntries;

    CanonicalStateIterator(
            LsmReadSnapshot view,
            KeyGroupRange range,
            CanonicalKeys keys,
            Map<Integer, CanonicalSavepointResources.KvState> kvStates,
            List<HeapPriorityQueueStateSnapshot<?>> timers,
            int firstTimerId)
            throws IOException {
        this.keys = keys;
        this.kvStates = kvStates;
        this.timers = timers;
        this.firstTimerId = firstTimerId;
        this.lastKeyGroup = range.getEndKeyGroup();
        this.keyGroup = range.getStartKeyGroup();
        this.engine =
                view.scan(
                        range.getNumberOfKeyGroups() == 0
                                ? KeyRange.of(KeyGroupSpan.EMPTY)
                                : KeyRange.of(
                                        KeyGroupSpan.of(
                                                range.getStartKeyGroup(), range.getEndKeyGroup())));
        if (range.getNumberOfKeyGroups() > 0) {
            try {
                advance();
            } catch (IOException | RuntimeException | Error e) {
                // Flink gets no iterator to close: its version would stay pinned for good
                engine.close();
                throw e;
            }
        }
    }

    @Override
    public void next() throws IOException {
        advance();
    }

    private void advance() throws IOException {
        while (keyGroup <= lastKeyGroup) {
            if (!inTimers) {
                if (engine.isValid() && KeyGroupSpan.keyGroupOf(engine.key()) == keyGroup) {
                    if (nextKvEntry()) {
                        return;
                    }
                    continue;
                }
                inTimers = true;
                timerQueue = 0;
                timerElements = null;
            }
            if (nextTimer()) {
                return;
            }
            keyGroup++;
            inTimers = false;
        }
        valid = false;
        currentKey = null;
        currentValue = null;
        if (unknownStateEntries > 0) {
            LOG.warn(
                    "{} engine entries of unregistered states were left out of the savepoint",
                    unknownStateEntries);
        }
    }

    /** Emits the entry at the engine iterator; false if it belongs to no registered state. */
    private boolean nextKvEntry() throws IOException {
        byte[] k = engine.key();
        CanonicalSavepointResources.KvState s = kvStates.get(KeyLayout.stateIdOf(k));
        if (s == null) {
            unknownStateEntries++;
            engine.next();
            return false;
        }
        StateSnapshotTransformer<byte[]> transformer = s.transformer();
        byte[] value;
        if (s.list()) {
            int pairLength = CanonicalKeys.pairPrefixLength(k);
            byte[] first = k.clone();
            listOut.clear();
            boolean any = false;
            do {
                byte[] element = transform(transformer, engine.value());
                if (element != null) {
                    if (any) {
                        listOut.writeByte(LIST_DELIMITER);
                    }
                    listOut.write(element);
                    any = true;
                }
                engine.next();
            } while (engine.isValid() && samePair(engine.key(), first, pairLength));
            if (!any) {
                return false;
            }
            value = listOut.getCopyOfBuffer();
            k = first;
        } else {
            value = engine.value();
            engine.next();
            value = s.map() ? transformMapValue(transformer, value) : transform(transformer, value);
            if (value == null) {
                return false;
            }
        }
        emit(s.savepointId(), keys.toCanonical(k, keyGroup, s.ambiguous(), s.map()), value);
        return true;
    }

    private static byte[] transform(StateSnapshotTransformer<byte[]> transformer, byte[] value) {
        return transformer == null ? value : transformer.filterOrTransform(value);
    }

    /** A map value is a null flag and the value; the transformer sees the value only. */
    private static byte[] transformMapValue(
            StateSnapshotTransformer<byte[]> transformer, byte[] stored) {
        if (transformer == null || stored.length == 0 || stored[0] != 0) {
            return stored; // no transformer, or a null user value
        }
        byte[] inner = Arrays.copyOfRange(stored, 1, stored.length);
        byte[] out = transformer.filterOrTransform(inner);
        if (out == null) {
            return null;
        }
        byte[] flagged = new byte[out.length + 1];
        System.arraycopy(out, 0, flagged, 1, out.length);
        return flagged;
    }

    private static boolean samePair(byte[] key, byte[] first, int pairLength) {
        return key.length > pairLength
                && Arrays.equals(key, 0, pairLength, first, 0, pairLength)
                && CanonicalKeys.pairPrefixLength(key) == pairLength;
    }

    /** Emits the next timer of the current key group, if any. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private boolean nextTimer() throws IOException {
        while (timerQueue < timers.size()) {
            HeapPriorityQueueStateSnapshot q = timers.get(timerQueue);
            if (timerElements == null) {
                timerElements = q.getIteratorForKeyGroup(keyGroup);
            }
            if (timerElements.hasNext()) {
                TypeSerializer ser = q.getMetaInfo().getElementSerializer();
                emit(
                        firstTimerId + timerQueue,
                        keys.timerKey(keyGroup, timerElements.next(), ser),
                        EMPTY);
                return true;
            }
            timerQueue++;
            timerElements = null;
        }
        return false;
    }

    private void emit(int stateId, byte[] key, byte[] value) {
        newKeyGroup = keyGroup != currentKeyGroup;
        newState = stateId != currentStateId;
        currentKeyGroup = keyGroup;
        currentStateId = stateId;
        currentKey = key;
        currentValue = value;
        valid = true;
    }

    @Override
    public int keyGroup() {
        return currentKeyGroup;
    }

    @Override
    public byte[] key() {
        return currentKey;
    }

    @Override
    public byte[] value() {
        return currentValue;
    }

    @Override
    public int kvStateId() {
        return currentStateId;
    }

    @Override
    public boolean isNewKeyValueState() {
        return newState;
    }

    @Override
    public boolean isNewKeyGroup() {
        return newKeyGroup;
    }

    @Override
    public boolean isValid() {
        return valid;
    }

    @Override
    public void close() {
        engine.close();
    }
}
