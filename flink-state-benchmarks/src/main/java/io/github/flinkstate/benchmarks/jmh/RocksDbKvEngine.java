package io.github.flinkstate.benchmarks.jmh;

import java.io.File;
import java.io.IOException;
import java.util.Arrays;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.CompressionType;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteOptions;

/**
 * {@link KvEngine} over RocksDB through frocksdbjni (the {@code org.rocksdb} classes Flink's
 * RocksDB backend uses), configured like {@link LsmKvEngine}; scans create one iterator per call
 * and stop at the first key without the prefix, as Flink's RocksDB map state does.
 */
final class RocksDbKvEngine implements KvEngine {

    static {
        RocksDB.loadLibrary();
    }

    private final RocksDB db;
    private final Options options;
    private final LRUCache cache;
    private final BloomFilter bloom;
    private final WriteOptions writeOptions;
    private final ReadOptions readOptions;

    private RocksDbKvEngine(RocksDB db, Options options, LRUCache cache, BloomFilter bloom) {
        this.db = db;
        this.options = options;
        this.cache = cache;
        this.bloom = bloom;
        this.writeOptions = new WriteOptions().setDisableWAL(true);
        this.readOptions = new ReadOptions();
    }

    static RocksDbKvEngine open(File dir, long cacheBytes) throws IOException {
        LRUCache cache = new LRUCache(cacheBytes);
        BloomFilter bloom = new BloomFilter(10, false);
        BlockBasedTableConfig table =
                new BlockBasedTableConfig()
                        .setBlockCache(cache)
                        .setFilterPolicy(bloom)
                        .setBlockSize(4096);
        Options options =
                new Options()
                        .setCreateIfMissing(true)
                        .setCompressionType(CompressionType.NO_COMPRESSION)
                        .setWriteBufferSize(4L << 20)
                        .setMaxWriteBufferNumber(3)
                        .setTargetFileSizeBase(8L << 20)
                        .setLevel0FileNumCompactionTrigger(4)
                        .setMaxBytesForLevelBase(32L << 20)
                        .setMaxBytesForLevelMultiplier(10)
                        .setNumLevels(7)
                        .setTableFormatConfig(table);
        try {
            dir.mkdirs();
            return new RocksDbKvEngine(
                    RocksDB.open(options, dir.getAbsolutePath()), options, cache, bloom);
        } catch (RocksDBException e) {
            options.close();
            cache.close();
            bloom.close();
            throw new IOException(e);
        }
    }

    @Override
    public void put(byte[] key, byte[] value) throws IOException {
        try {
            db.put(writeOptions, key, value);
        } catch (RocksDBException e) {
            throw new IOException(e);
        }
    }

    @Override
    public byte[] get(byte[] key) throws IOException {
        try {
            return db.get(readOptions, key);
        } catch (RocksDBException e) {
            throw new IOException(e);
        }
    }

    @Override
    public int scanPrefix(byte[] prefix, EntryVisitor visitor) {
        int n = 0;
        try (RocksIterator it = db.newIterator(readOptions)) {
            for (it.seek(prefix); it.isValid(); it.next()) {
                byte[] key = it.key();
                if (key.length < prefix.length
                        || !Arrays.equals(key, 0, prefix.length, prefix, 0, prefix.length)) {
                    break;
                }
                visitor.visit(key, it.value());
                n++;
            }
        }
        return n;
    }

    @Override
    public void flushAndCompact() throws IOException {
        try (org.rocksdb.FlushOptions flush =
                new org.rocksdb.FlushOptions().setWaitForFlush(true)) {
            db.flush(flush);
            db.compactRange();
        } catch (RocksDBException e) {
            throw new IOException(e);
        }
    }

    @Override
    public void close() {
        db.close();
        readOptions.close();
        writeOptions.close();
        options.close();
        cache.close();
        bloom.close();
    }
}
