package io.github.flinkstate.disagg.engine.compaction;

import io.github.flinkstate.disagg.engine.cache.DiskCache;
import io.github.flinkstate.disagg.engine.fs.FileNames;
import io.github.flinkstate.disagg.engine.key.Bytes;
import io.github.flinkstate.disagg.engine.key.EntryType;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.key.KeyRange;
import io.github.flinkstate.disagg.engine.memtable.Memtable;
import io.github.flinkstate.disagg.engine.sst.BlockCompression;
import io.github.flinkstate.disagg.engine.sst.PrefixTombstone;
import io.github.flinkstate.disagg.engine.sst.SstFooter;
import io.github.flinkstate.disagg.engine.sst.SstWriter;
import io.github.flinkstate.disagg.engine.version.FileMeta;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToIntFunction;
import org.apache.flink.core.fs.FileSystem;

/**
 * Creates the SST files a store writes (flush and compaction outputs) in its primary directory and
 * turns finished writers into {@link FileMeta}.
 *
 * <p>Thread safety: thread-safe (file numbers are atomic; each writer is confined).
 */
public final class SstOutputs {

    private final FileSystem fs;
    private final FileNames names;
    private final int blockSize;
    private final int bloomBitsPerKey;
    private final KeyGroupSpan span;
    private final ToIntFunction<byte[]> bloomPrefix;
    private final BlockCompression compression;
    private final DiskCache disk;

    /**
     * Set by {@link #stop()}: flushes and compactions writing through this end at their next entry.
     */
    private volatile boolean stopped;

    /**
     * {@code bloomPrefix}: null, or the store's {@code LsmOptions.bloomPrefix}; {@code
     * compression}: the store's {@code LsmOptions.compression}; {@code disk}: null, or the local
     * disk tier that keeps a copy of each file written while it is written.
     */
    public SstOutputs(
            FileSystem fs,
            FileNames names,
            int blockSize,
            int bloomBitsPerKey,
            KeyGroupSpan span,
            ToIntFunction<byte[]> bloomPrefix,
            BlockCompression compression,
            DiskCache disk) {
        this.disk = disk;
        this.bloomPrefix = bloomPrefix;
        this.compression = compression;
        this.fs = fs;
        this.names = names;
        this.blockSize = blockSize;
        this.bloomBitsPerKey = bloomBitsPerKey;
        this.span = span;
    }

    /**
     * Makes every flush and compaction writing through these outputs fail at its next entry (and
     * delete what it wrote): the store is closing and drops their results anyway.
     */
    public void stop() {
        stopped = true;
    }

    /**
     * Throws once {@link #stop()} was called; called per entry written.
     *
     * @throws IOException naming the reason
     */
    public void checkNotStopped() throws IOException {
        if (stopped) {
            throw new IOException("stopped: the store is closed and drops this result");
        }
    }

    /** The naming of this store's files. */
    public FileNames names() {
        return names;
    }

    /** A writer for a new file; tombstones are tracked so they can go into the manifest. */
    public Output create() throws IOException {
        org.apache.flink.core.fs.Path path = names.nextSst();
        return new Output(
                new SstWriter(
                        fs,
                        path,
                        blockSize,
                        bloomBitsPerKey,
                        span,
                        bloomPrefix,
                        compression,
                        disk == null ? null : disk.writeThrough(path.toString())));
    }

    /**
     * Writes a frozen memtable (entries and prefix tombstones) to a new file. On failure the
     * partial file is deleted and the memtable is untouched.
     *
     * @param filter null, or the filter of this flush: a put it drops is written as a point delete
     *     with the same sequence number (older versions of the key may be in files)
     * @param filtered incremented by the number of puts the filter dropped, once the file is
     *     written
     */
    public FileMeta writeMemtable(Memtable m, CompactionFilter filter, AtomicLong filtered)
            throws IOException {
        Output out = create();
        long dropped = 0;
        try {
            Memtable.Cursor e = m.cursor();
            for (e.seek(Bytes.EMPTY); e.valid(); e.next()) {
                checkNotStopped();
                byte[] key = e.key();
                byte[] value = e.value();
                if (filter != null && e.type() == EntryType.PUT && filter.drop(key, value)) {
                    out.writer().add(key, e.seq(), EntryType.DELETE, null);
                    dropped++;
                    continue;
                }
                out.writer().add(key, e.seq(), e.type(), value);
            }
            Memtable.Cursor t = m.tombstoneCursor();
            for (t.seek(Bytes.EMPTY); t.valid(); t.next()) {
                out.addTombstone(t.key(), t.seq());
            }
            FileMeta file = out.finish(null);
            filtered.addAndGet(dropped);
            return file;
        } catch (Error e) {
            out.close(); // an output left open would keep its local copy's disk reservation
            throw e;
        } catch (IOException | RuntimeException e) {
            out.close();
            throw new IOException(
                    "Flush of memtable "
                            + m.id()
                            + " to "
                            + out.writer().path()
                            + " failed: "
                            + e.getMessage(),
                    e);
        }
    }

    /** Deletes a file written by this store that never became live (best effort). */
    public void deleteQuietly(FileMeta f) {
        if (disk != null) {
            disk.forget(f.path()); // its write-through copy went into the disk tier
        }
        try {
            fs.delete(new org.apache.flink.core.fs.Path(f.path()), false);
        } catch (IOException | RuntimeException ignored) {
            // an orphan is harmless: no version references it
        }
    }

    /** A writer plus the tombstones added to it. */
    public static final class Output implements AutoCloseable {
        private final SstWriter writer;
        private final List<PrefixTombstone> tombstones = new ArrayList<>();

        Output(SstWriter writer) {
            this.writer = writer;
        }

        public SstWriter writer() {
            return writer;
        }

        public void addTombstone(byte[] prefix, long seq) {
            writer.addTombstone(prefix, seq);
            tombstones.add(new PrefixTombstone(prefix, seq));
        }

        public FileMeta finish(KeyRange bounds) throws IOException {
            SstFooter footer = writer.finish(bounds);
            return FileMeta.fromFooter(
                    writer.path().toString(), writer.fileSize(), footer, tombstones);
        }

        @Override
        public void close() {
            writer.abort();
        }
    }
}
