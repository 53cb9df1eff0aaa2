package io.github.flinkstate.benchmarks.jmh;

import java.io.File;
import java.io.IOException;

/**
 * The byte-array key/value operations {@link EngineBenchmark} measures, over our LSM engine or
 * RocksDB. Not thread-safe for writes; one instance per benchmark trial, closed at its end.
 */
public interface KvEngine extends AutoCloseable {

    /** Engines compared by {@link EngineBenchmark}. */
    enum Kind {
        LSM,
        ROCKSDB;

        /**
         * Opens an empty engine in {@code dir} whose block cache holds {@code cacheBytes}. Both
         * engines get the same shape: 4 KB blocks, no compression, 10-bit bloom filters, 4 MB
         * memtables (at most 2 immutable), 8 MB files, L0 trigger 4, 32 MB level base times 10, no
         * write-ahead log.
         */
        public KvEngine open(File dir, long cacheBytes) throws IOException {
            return this == LSM
                    ? LsmKvEngine.open(dir, cacheBytes)
                    : RocksDbKvEngine.open(dir, cacheBytes);
        }
    }

    void put(byte[] key, byte[] value) throws IOException;

    /** The value or null. */
    byte[] get(byte[] key) throws IOException;

    /** Visits every entry whose key starts with {@code prefix}; returns how many. */
    int scanPrefix(byte[] prefix, EntryVisitor visitor) throws IOException;

    /** Writes memtables to files and compacts everything to one sorted run. */
    void flushAndCompact() throws IOException;

    @Override
    void close() throws IOException;

    /** Receives scanned entries. */
    @FunctionalInterface
    interface EntryVisitor {
        void visit(byte[] key, byte[] value);
    }
}
