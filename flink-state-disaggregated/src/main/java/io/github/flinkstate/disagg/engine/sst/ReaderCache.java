package io.github.flinkstate.disagg.engine.sst;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import io.github.flinkstate.disagg.engine.cache.BlockCache;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

/**
 * Keeps a bounded number of opened {@link SstReader}s (parsed footer, index, bloom filter and an
 * open stream). On eviction the reader is closed (stream and block-cache table); a caller still
 * holding the reader may keep using it (the stream is reopened on demand), so eviction never breaks
 * a read.
 *
 * <p>It lives in {@code sst}, not {@code cache}: the block cache is a leaf package that the SST
 * reader uses, and this cache of readers depends on the reader, so the dependency runs one way
 * ({@code sst -> cache}).
 *
 * <p>Thread safety: thread-safe.
 */
public final class ReaderCache {

    private final FileSystem fs;
    private final BlockCache blockCache;
    private final Cache<String, SstReader> readers;
    private final ReadCounters counters = new ReadCounters();

    public ReaderCache(FileSystem fs, BlockCache blockCache, int maxOpenFiles) {
        this.fs = fs;
        this.blockCache = blockCache;
        this.readers =
                Caffeine.newBuilder()
                        .maximumSize(maxOpenFiles)
                        .executor(Runnable::run)
                        .removalListener(
                                (String k, SstReader r, RemovalCause c) -> {
                                    if (r != null) {
                                        r.close();
                                    }
                                })
                        .build();
    }

    /** The reader of a file, opened (and its size verified) on first use. */
    public SstReader get(String path, long expectedSize) throws IOException {
        SstReader r = readers.getIfPresent(path);
        if (r != null) {
            return r;
        }
        try {
            return readers.get(
                    path,
                    p -> {
                        try {
                            return SstReader.open(
                                    fs, new Path(p), blockCache, expectedSize, counters);
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    });
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    public void evict(String path) {
        readers.invalidate(path);
    }

    public void clear() {
        readers.invalidateAll();
        readers.cleanUp();
    }

    /** Reads of every reader this cache opened (also of readers since evicted). */
    public ReadCounters counters() {
        return counters;
    }

    public long size() {
        return readers.estimatedSize();
    }
}
