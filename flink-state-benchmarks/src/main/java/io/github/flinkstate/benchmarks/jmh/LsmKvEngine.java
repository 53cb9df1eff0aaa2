package io.github.flinkstate.benchmarks.jmh;

import io.github.flinkstate.disagg.engine.LsmOptions;
import io.github.flinkstate.disagg.engine.LsmStore;
import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.disagg.engine.iterator.LsmIterator;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import java.io.File;
import java.io.IOException;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.local.LocalFileSystem;

/** {@link KvEngine} over {@link LsmStore} on the local file system, all 65,536 key groups. */
final class LsmKvEngine implements KvEngine {

    private final LsmStore store;

    private LsmKvEngine(LsmStore store) {
        this.store = store;
    }

    static LsmKvEngine open(File dir, long cacheBytes) throws IOException {
        LsmOptions options =
                new LsmOptions(
                                LocalFileSystem.getSharedInstance(),
                                new Path(dir.toURI()),
                                KeyGroupSpan.of(0, KeyGroupSpan.MAX_KEY_GROUP))
                        .memtableBytes(4L << 20)
                        .maxImmutableMemtables(2)
                        .blockSize(4096)
                        .bloomBitsPerKey(10)
                        .targetFileBytes(8L << 20)
                        .l0CompactionTrigger(4)
                        .levelBaseBytes(32L << 20)
                        .levelMultiplier(10)
                        .blockCache(new BlockCache(cacheBytes));
        return new LsmKvEngine(LsmStore.open(options));
    }

    @Override
    public void put(byte[] key, byte[] value) throws IOException {
        store.put(key, value);
    }

    @Override
    public byte[] get(byte[] key) throws IOException {
        return store.get(key);
    }

    @Override
    public int scanPrefix(byte[] prefix, EntryVisitor visitor) throws IOException {
        int n = 0;
        try (LsmIterator it = store.scanPrefix(prefix)) {
            for (; it.isValid(); it.next()) {
                visitor.visit(it.key(), it.value());
                n++;
            }
        }
        return n;
    }

    @Override
    public void flushAndCompact() throws IOException {
        store.flush();
        store.compactAll();
    }

    @Override
    public void close() {
        store.close();
    }
}
