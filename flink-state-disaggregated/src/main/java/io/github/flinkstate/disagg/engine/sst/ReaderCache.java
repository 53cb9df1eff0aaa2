package io.github.flinkstate.disagg.engine.sst;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.disagg.engine.cache.InFlight;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import javax.annotation.Nullable;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.util.ExceptionUtils;

/**
 * Keeps a bounded number of opened {@link SstReader}s (parsed footer, index, bloom filter, a pool
 * of at most {@code streamsPerFile} streams for point reads and one stream each for compaction and
 * scan readahead). On eviction the reader is closed (streams and block-cache table); a caller still
 * holding the reader may keep using it (each read then opens its own short-lived stream), so
 * eviction never breaks a read.
 *
 * <p>Opening a file (a remote round trip or two) never runs inside the Caffeine cache's compute,
 * which holds a lock of the cache's hash table: files open concurrently on the calling threads, and
 * only concurrent opens of the same file are merged (the later callers wait for the first one's
 * reader or exception, unless that only says its thread was interrupted: they then open it
 * themselves). The size of the tail read that opens a file is learned: the largest
 * metadata-to-file-size ratio seen so far, with some headroom, so that the metadata of the next
 * file most likely arrives in one read.
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
    private final int streamsPerFile;
    private final ConcurrentHashMap<String, CompletableFuture<SstReader>> opening =
            new ConcurrentHashMap<>();

    private volatile boolean closed;

    /**
     * Files the store replaced by identical copies ({@code LsmStore.rehomeAll}), original path to
     * copy path, while an older version (a reader, a savepoint) still lists the original: its reads
     * go to the copy, which stays when Flink deletes the original (a full checkpoint that named the
     * copy completed). A copy that is gone falls back to the original.
     */
    private final ConcurrentHashMap<String, String> copies = new ConcurrentHashMap<>();

    /** Largest metadata bytes per 2^20 file bytes seen so far (the tail-read estimate). */
    private final AtomicLong metadataPerMebi = new AtomicLong(1L << 15);

    /** The smallest and the largest tail read at open. */
    static final long MIN_TAIL_BYTES = 16 << 10;

    static final long MAX_TAIL_BYTES = 16 << 20;

    public ReaderCache(FileSystem fs, BlockCache blockCache, int maxOpenFiles) {
        this(fs, blockCache, maxOpenFiles, SstReader.DEFAULT_STREAMS_PER_FILE);
    }

    public ReaderCache(FileSystem fs, BlockCache blockCache, int maxOpenFiles, int streamsPerFile) {
        this.fs = fs;
        this.blockCache = blockCache;
        this.streamsPerFile = streamsPerFile;
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

    /**
     * The reader of a file, opened (and its size verified) on first use. Concurrent first uses open
     * it once, unless that open fails only because its thread was interrupted: then each waiter
     * opens the file itself, joining no other open.
     */
    public SstReader get(String path, long expectedSize) throws IOException {
        String copy = copyOf(path);
        if (copy != null) {
            try {
                return getDirect(copy, expectedSize);
            } catch (IOException e) {
                if (ExceptionUtils.findThrowable(e, FileNotFoundException.class).isEmpty()) {
                    throw e;
                }
                copies.remove(path, copy); // deleted (its checkpoint was discarded): the original
            }
        }
        return getDirect(path, expectedSize);
    }

    /**
     * The reader of a file if it is open now (of the copy its reads go to, if any), or null; opens
     * nothing.
     */
    @Nullable
    public SstReader getIfOpen(String path) {
        String copy = copyOf(path);
        return readers.getIfPresent(copy != null ? copy : path);
    }

    /** The copy reads of {@code path} go to ({@link #readThroughCopy}), or null. */
    @Nullable
    private String copyOf(String path) {
        // on every read of a file: no hash lookup while the store replaced no file
        return copies.isEmpty() ? null : copies.get(path);
    }

    /**
     * Reads of {@code original} go to {@code copy}, an identical copy, from now on; so do the reads
     * that went to {@code original} as a copy itself.
     */
    public void readThroughCopy(String original, String copy) {
        copies.replaceAll((from, to) -> to.equals(original) ? copy : to);
        copies.put(original, copy);
    }

    /**
     * No version lists {@code path} any more: reads of it no longer go to a copy, and no read goes
     * to it as a copy (the store may delete it, or hand it back for deletion, from now on).
     */
    public void forgetCopy(String path) {
        copies.remove(path);
        copies.values().removeIf(path::equals);
    }

    private SstReader getDirect(String path, long expectedSize) throws IOException {
        boolean joinedAnInterruptedOpen = false;
        while (true) {
            SstReader r = readers.getIfPresent(path);
            if (r != null) {
                return r;
            }
            CompletableFuture<SstReader> mine = new CompletableFuture<>();
            CompletableFuture<SstReader> running = opening.putIfAbsent(path, mine);
            if (running == null) {
                return openOnce(path, expectedSize, mine);
            }
            if (joinedAnInterruptedOpen) { // its own open: another may fail the same way
                return openAndPublish(path, expectedSize);
            }
            r = InFlight.awaitUnlessInterruptedElsewhere(running, "a file to open");
            if (r != null) {
                return r;
            }
            joinedAnInterruptedOpen = true; // the opening thread was interrupted, not this one
        }
    }

    private SstReader openOnce(String path, long expectedSize, CompletableFuture<SstReader> mine)
            throws IOException {
        try {
            SstReader r = openAndPublish(path, expectedSize);
            // no longer in flight before waiters wake: one that opens again must not find it
            opening.remove(path, mine);
            mine.complete(r);
            return r;
        } catch (Throwable t) {
            opening.remove(path, mine);
            mine.completeExceptionally(t);
            throw t;
        }
    }

    /** The cached reader of a file, or one opened now and cached (the first to be cached wins). */
    private SstReader openAndPublish(String path, long expectedSize) throws IOException {
        SstReader r = readers.getIfPresent(path);
        if (r != null) {
            return r;
        }
        r = open(path, expectedSize);
        SstReader present = readers.asMap().putIfAbsent(path, r);
        if (present != null) {
            r.close();
            return present;
        }
        if (closed) {
            readers.invalidate(path); // closed meanwhile: its streams go now
        }
        return r;
    }

    private SstReader open(String path, long expectedSize) throws IOException {
        long tail = expectedSize < 0 ? SstReader.DEFAULT_TAIL_BYTES : tailBytesFor(expectedSize);
        SstReader r =
                SstReader.open(
                        fs,
                        new Path(path),
                        blockCache,
                        expectedSize,
                        counters,
                        streamsPerFile,
                        tail);
        if (r.fileSize() >= (1 << 20)) {
            long perMebi = r.metadataBytes() * (1 << 20) / r.fileSize() + 1;
            metadataPerMebi.accumulateAndGet(perMebi, Math::max);
        }
        return r;
    }

    /** The tail read size the next open of a file of {@code fileSize} bytes would use. */
    long tailBytesFor(long fileSize) {
        long per = metadataPerMebi.get();
        long tail = fileSize * per / (1 << 20) * 5 / 4;
        return Math.max(MIN_TAIL_BYTES, Math.min(MAX_TAIL_BYTES, tail));
    }

    public void evict(String path) {
        readers.invalidate(path);
    }

    public void clear() {
        readers.invalidateAll();
        readers.cleanUp();
    }

    /**
     * Closes every reader, and every reader opened from now on as soon as its open returns (an open
     * still on its way, a background warm-up's on a slow primary, would otherwise keep its streams
     * after the store closed). Readers handed out keep answering reads through short-lived streams.
     */
    public void close() {
        closed = true;
        clear();
    }

    /** Reads of every reader this cache opened (also of readers since evicted). */
    public ReadCounters counters() {
        return counters;
    }

    public long size() {
        return readers.estimatedSize();
    }
}
