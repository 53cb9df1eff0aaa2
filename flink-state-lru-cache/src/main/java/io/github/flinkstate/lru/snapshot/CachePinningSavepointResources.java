package io.github.flinkstate.lru.snapshot;

import io.github.flinkstate.lru.cow.CowLruMap;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.FullSnapshotResources;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyValueStateIterator;
import org.apache.flink.runtime.state.StreamCompressionDecorator;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;

/**
 * The delegate's canonical-savepoint resources, plus a running cache snapshot that is held until
 * the savepoint is written.
 *
 * <p>Why: before a canonical savepoint the cache writes its changed entries to the delegate. A
 * delegate that keeps objects (the HashMap backend) then shares the cached value objects, and its
 * asynchronous savepoint writer serializes them later. Holding a cache snapshot meanwhile makes the
 * cache hand out a private copy before anyone may mutate such an object in place (see {@link
 * CowLruMap#privateValue}), so records after the barrier cannot change the savepoint.
 *
 * <p>Thread safety: {@link #release()} may be called from any thread, at most once takes effect.
 */
public final class CachePinningSavepointResources<K> implements FullSnapshotResources<K> {

    private final FullSnapshotResources<K> delegate;
    private final CowLruMap cache;
    private final int snapshotVersion;
    private final AtomicBoolean released = new AtomicBoolean();

    public CachePinningSavepointResources(
            FullSnapshotResources<K> delegate, CowLruMap cache, int snapshotVersion) {
        this.delegate = delegate;
        this.cache = cache;
        this.snapshotVersion = snapshotVersion;
    }

    @Override
    public List<StateMetaInfoSnapshot> getMetaInfoSnapshots() {
        return delegate.getMetaInfoSnapshots();
    }

    @Override
    public KeyValueStateIterator createKVStateIterator() throws IOException {
        return delegate.createKVStateIterator();
    }

    @Override
    public KeyGroupRange getKeyGroupRange() {
        return delegate.getKeyGroupRange();
    }

    @Override
    public TypeSerializer<K> getKeySerializer() {
        return delegate.getKeySerializer();
    }

    @Override
    public StreamCompressionDecorator getStreamCompressionDecorator() {
        return delegate.getStreamCompressionDecorator();
    }

    @Override
    public void release() {
        if (released.compareAndSet(false, true)) {
            try {
                delegate.release();
            } finally {
                cache.release(snapshotVersion);
            }
        }
    }
}
