package io.github.flinkstate.disagg.backend;

import io.github.flinkstate.disagg.engine.LsmReadSnapshot;
import io.github.flinkstate.disagg.engine.LsmStore;
import io.github.flinkstate.disagg.engine.iterator.LsmIterator;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.key.KeyRange;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Spliterators;
import java.util.function.Function;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.runtime.state.KeyGroupRange;

/**
 * Lists the (key, namespace) pairs of one state from an engine read snapshot, so the caller may
 * change state while it consumes the stream ({@code applyToAllKeys}). One engine iterator serves
 * the whole key-group range: it reseeks to {@code keyGroup | stateId} for each key group and stops
 * at the state's last entry there; entries of other states are never read. Consecutive entries with
 * the same (key, namespace) (map user keys, list elements) yield one pair.
 *
 * <p>Thread safety: the stream is single-threaded; closing it releases the snapshot.
 */
final class StateKeyStream {

    private StateKeyStream() {}

    static <K, N> Stream<K> keys(
            LsmStore store,
            KeyGroupRange range,
            RegisteredKvState info,
            TypeSerializer<K> keySerializer,
            N namespace) {
        TypeSerializer<N> nsSer = info.namespaceSerializer();
        KeyLayout.Reader reader = new KeyLayout.Reader();
        return pairs(
                        store,
                        range,
                        info,
                        k -> {
                            try {
                                reader.reset(k);
                                K key = reader.read(keySerializer);
                                N ns = reader.read(nsSer);
                                return Objects.equals(ns, namespace) ? key : null;
                            } catch (IOException e) {
                                throw new UncheckedIOException(e);
                            }
                        })
                .filter(Objects::nonNull);
    }

    static <K, N> Stream<Tuple2<K, N>> keysAndNamespaces(
            LsmStore store,
            KeyGroupRange range,
            RegisteredKvState info,
            TypeSerializer<K> keySerializer) {
        TypeSerializer<N> nsSer = info.namespaceSerializer();
        KeyLayout.Reader reader = new KeyLayout.Reader();
        return pairs(
                store,
                range,
                info,
                k -> {
                    try {
                        reader.reset(k);
                        K key = reader.read(keySerializer);
                        N ns = reader.read(nsSer);
                        return Tuple2.of(key, ns);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                });
    }

    /** Distinct (key, namespace) prefixes for lists, entries for the other state kinds. */
    static long countEntries(LsmStore store, KeyGroupRange range, RegisteredKvState info) {
        boolean list =
                info.metaInfo().getStateType()
                        == org.apache.flink.api.common.state.StateDescriptor.Type.LIST;
        try (PairIterator it = new PairIterator(store, range, info.stateId(), !list)) {
            long n = 0;
            while (it.hasNext()) {
                it.next();
                n++;
            }
            return n;
        }
    }

    private static <T> Stream<T> pairs(
            LsmStore store, KeyGroupRange range, RegisteredKvState info, Function<byte[], T> f) {
        PairIterator it = new PairIterator(store, range, info.stateId(), false);
        return StreamSupport.stream(Spliterators.spliteratorUnknownSize(it, 0), false)
                .map(f)
                .onClose(it::close);
    }

    /** Length of the {@code header | len key | len namespace} prefix of an engine key. */
    static int pairPrefixLength(byte[] k) {
        int p = KeyLayout.HEADER_BYTES;
        p += 4 + readInt(k, p);
        p += 4 + readInt(k, p);
        return p;
    }

    private static int readInt(byte[] b, int at) {
        return ((b[at] & 0xFF) << 24)
                | ((b[at + 1] & 0xFF) << 16)
                | ((b[at + 2] & 0xFF) << 8)
                | (b[at + 3] & 0xFF);
    }

    /** Engine keys of one state, one per (key, namespace) unless {@code everyEntry}. */
    private static final class PairIterator implements Iterator<byte[]>, AutoCloseable {
        private final LsmReadSnapshot snapshot;
        private final LsmIterator it;
        private final KeyGroupRange range;
        private final int stateId;
        private final boolean everyEntry;
        private int keyGroup;
        private byte[] statePrefix;
        private byte[] lastPair;
        private byte[] next;
        private boolean closed;

        PairIterator(LsmStore store, KeyGroupRange range, int stateId, boolean everyEntry) {
            this.range = range;
            this.stateId = stateId;
            this.everyEntry = everyEntry;
            try {
                this.snapshot = store.readSnapshot();
                try {
                    this.it = snapshot.scan(KeyRange.ALL);
                } finally {
                    snapshot.close(); // the iterator holds the version itself
                }
                this.keyGroup = range.getStartKeyGroup();
                if (range.getNumberOfKeyGroups() > 0) {
                    try {
                        seekKeyGroup();
                        advance();
                    } catch (IOException | RuntimeException | Error e) {
                        // nobody can close a stream its constructor did not return: its
                        // version would stay pinned, its files never deleted
                        close();
                        throw e;
                    }
                } else {
                    close();
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        private void seekKeyGroup() throws IOException {
            statePrefix = KeyLayout.statePrefix(keyGroup, stateId);
            it.seek(statePrefix);
        }

        private void advance() throws IOException {
            next = null;
            while (!closed) {
                if (it.isValid() && startsWith(it.key(), statePrefix)) {
                    byte[] k = it.key();
                    it.next();
                    if (everyEntry) {
                        next = k;
                        return;
                    }
                    byte[] pair = Arrays.copyOf(k, pairPrefixLength(k));
                    if (!Arrays.equals(pair, lastPair)) {
                        lastPair = pair;
                        next = k;
                        return;
                    }
                    continue;
                }
                if (!it.isValid()) {
                    // past the store's last key: no later key group holds anything (seeking each
                    // of them would cost one merged seek per key group, up to 32,768)
                    close();
                    return;
                }
                // skip key groups without entries without seeking into each of them
                int nextKeyGroup = Math.max(keyGroup + 1, KeyGroupSpan.keyGroupOf(it.key()));
                if (nextKeyGroup > range.getEndKeyGroup()) {
                    close();
                    return;
                }
                keyGroup = nextKeyGroup;
                seekKeyGroup();
            }
        }

        private static boolean startsWith(byte[] k, byte[] p) {
            return k.length >= p.length && Arrays.equals(k, 0, p.length, p, 0, p.length);
        }

        @Override
        public boolean hasNext() {
            return next != null;
        }

        @Override
        public byte[] next() {
            if (next == null) {
                throw new NoSuchElementException();
            }
            byte[] k = next;
            try {
                advance();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return k;
        }

        @Override
        public void close() {
            if (!closed) {
                closed = true;
                it.close();
            }
        }
    }
}
