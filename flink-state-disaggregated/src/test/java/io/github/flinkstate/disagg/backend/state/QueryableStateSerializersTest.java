package io.github.flinkstate.disagg.backend.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.backend.DisaggregatedKeyedStateBackend;
import io.github.flinkstate.disagg.backend.testutil.DisaggBackends;
import java.io.File;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.ListSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.MapSerializer;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.queryablestate.client.state.serialization.KvStateSerializer;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.internal.InternalKvState;
import org.apache.flink.runtime.state.internal.InternalListState;
import org.apache.flink.runtime.state.internal.InternalMapState;
import org.apache.flink.runtime.state.internal.InternalValueState;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A queryable-state lookup runs on a query thread with the duplicated ("safe") serializers Flink
 * hands it, never with the task's own (a Kryo serializer keeps its buffers in fields: sharing it
 * with the task thread corrupts what either writes). Found in a review: values were read with the
 * state's serializers.
 */
class QueryableStateSerializersTest {

    @TempDir File tmp;

    private DisaggBackends backends;

    @AfterEach
    void close() throws Exception {
        if (backends != null) {
            backends.close();
        }
    }

    @Test
    void lookupsFromAnotherThread_useOnlyTheSafeSerializers() throws Exception {
        backends = DisaggBackends.inLocalDir(new File(tmp, "primary"), "64kb");
        AtomicReference<String> misuse = new AtomicReference<>();
        Thread task = Thread.currentThread();
        DisaggregatedKeyedStateBackend<Integer> b =
                backends.create(
                        DisaggBackends.ALL,
                        List.of(),
                        new UnregisteredMetricsGroup(),
                        new ThreadOwned<>(IntSerializer.INSTANCE, task, misuse));
        ThreadOwned<VoidNamespace> namespaces =
                new ThreadOwned<>(VoidNamespaceSerializer.INSTANCE, task, misuse);
        ThreadOwned<Long> values = new ThreadOwned<>(LongSerializer.INSTANCE, task, misuse);
        InternalValueState<Integer, VoidNamespace, Long> value =
                (InternalValueState<Integer, VoidNamespace, Long>)
                        b.getPartitionedState(
                                VoidNamespace.INSTANCE,
                                namespaces,
                                new ValueStateDescriptor<>("v", values));
        InternalListState<Integer, VoidNamespace, Long> list =
                (InternalListState<Integer, VoidNamespace, Long>)
                        b.getPartitionedState(
                                VoidNamespace.INSTANCE,
                                namespaces,
                                new ListStateDescriptor<>("l", values));
        InternalMapState<Integer, VoidNamespace, Integer, Long> map =
                (InternalMapState<Integer, VoidNamespace, Integer, Long>)
                        b.getPartitionedState(
                                VoidNamespace.INSTANCE,
                                namespaces,
                                new MapStateDescriptor<>("m", IntSerializer.INSTANCE, values));
        b.setCurrentKey(5);
        value.update(42L);
        list.add(1L);
        list.add(2L);
        map.put(7, 70L);
        byte[] keyAndNamespace =
                KvStateSerializer.serializeKeyAndNamespace(
                        5,
                        IntSerializer.INSTANCE,
                        VoidNamespace.INSTANCE,
                        VoidNamespaceSerializer.INSTANCE);

        // each query thread duplicates its own serializers, as Flink's KvStateEntry does
        byte[] v = onOtherThread(() -> query(value, keyAndNamespace, values.duplicate()));
        byte[] l =
                onOtherThread(
                        () ->
                                query(
                                        list,
                                        keyAndNamespace,
                                        new ListSerializer<>(values.duplicate())));
        byte[] m =
                onOtherThread(
                        () ->
                                query(
                                        map,
                                        keyAndNamespace,
                                        new MapSerializer<>(
                                                IntSerializer.INSTANCE, values.duplicate())));

        assertThat(misuse.get()).as("a task serializer used on another thread").isNull();
        assertThat(KvStateSerializer.deserializeValue(v, LongSerializer.INSTANCE)).isEqualTo(42L);
        assertThat(KvStateSerializer.deserializeList(l, LongSerializer.INSTANCE))
                .containsExactly(1L, 2L);
        assertThat(
                        KvStateSerializer.deserializeMap(
                                m, IntSerializer.INSTANCE, LongSerializer.INSTANCE))
                .containsExactly(Map.entry(7, 70L));
    }

    @SuppressWarnings("unchecked")
    private static <V> byte[] query(
            InternalKvState<Integer, VoidNamespace, ?> state,
            byte[] keyAndNamespace,
            TypeSerializer<V> safeValues)
            throws Exception {
        return ((InternalKvState<Integer, VoidNamespace, V>) state)
                .getSerializedValue(
                        keyAndNamespace,
                        IntSerializer.INSTANCE,
                        VoidNamespaceSerializer.INSTANCE,
                        safeValues);
    }

    private static byte[] onOtherThread(Callable<byte[]> call) throws Exception {
        CompletableFuture<byte[]> result = new CompletableFuture<>();
        Thread t =
                new Thread(
                        () -> {
                            try {
                                result.complete(call.call());
                            } catch (Throwable e) {
                                result.completeExceptionally(e);
                            }
                        });
        t.start();
        t.join();
        return result.get();
    }

    /**
     * A serializer that notes any use on a thread other than its owner's. A duplicate belongs to
     * the thread that made it: the backend's (Flink's state descriptors hand out duplicates) to the
     * task thread, a query's to its query thread.
     */
    static final class ThreadOwned<T> extends TypeSerializer<T> {
        private final TypeSerializer<T> delegate;
        private final Thread owner;
        private final AtomicReference<String> misuse;

        ThreadOwned(TypeSerializer<T> delegate, Thread owner, AtomicReference<String> misuse) {
            this.delegate = delegate;
            this.owner = owner;
            this.misuse = misuse;
        }

        private void check(String call) {
            if (Thread.currentThread() != owner) {
                misuse.compareAndSet(
                        null, delegate + "." + call + " on " + Thread.currentThread().getName());
            }
        }

        @Override
        public boolean isImmutableType() {
            return delegate.isImmutableType();
        }

        @Override
        public ThreadOwned<T> duplicate() {
            return new ThreadOwned<>(delegate.duplicate(), Thread.currentThread(), misuse);
        }

        @Override
        public T createInstance() {
            return delegate.createInstance();
        }

        @Override
        public T copy(T from) {
            return delegate.copy(from);
        }

        @Override
        public T copy(T from, T reuse) {
            return delegate.copy(from, reuse);
        }

        @Override
        public int getLength() {
            return delegate.getLength();
        }

        @Override
        public void serialize(T record, DataOutputView target) throws IOException {
            check("serialize");
            delegate.serialize(record, target);
        }

        @Override
        public T deserialize(DataInputView source) throws IOException {
            check("deserialize");
            return delegate.deserialize(source);
        }

        @Override
        public T deserialize(T reuse, DataInputView source) throws IOException {
            return deserialize(source);
        }

        @Override
        public void copy(DataInputView source, DataOutputView target) throws IOException {
            check("copy");
            delegate.copy(source, target);
        }

        @Override
        public boolean equals(Object obj) {
            return obj instanceof ThreadOwned && delegate.equals(((ThreadOwned<?>) obj).delegate);
        }

        @Override
        public int hashCode() {
            return delegate.hashCode();
        }

        @Override
        public TypeSerializerSnapshot<T> snapshotConfiguration() {
            return delegate.snapshotConfiguration(); // restores as the plain serializer
        }
    }
}
