package io.github.flinkstate.changelog.read;

import io.github.flinkstate.changelog.format.CorruptSegmentException;
import io.github.flinkstate.changelog.format.SegmentChanges;
import io.github.flinkstate.changelog.format.SegmentDecoder;
import java.io.BufferedInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Set;
import javax.annotation.Nullable;
import javax.annotation.concurrent.ThreadSafe;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.changelog.ChangelogStateHandleStreamImpl;
import org.apache.flink.runtime.state.changelog.StateChange;
import org.apache.flink.runtime.state.changelog.StateChangelogHandleReader;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.util.CloseableIterator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the state changes behind a {@link ChangelogStateHandleStreamImpl} written by the {@code
 * dfs-batched} DSTL: metadata changes first, then by key group, every key group's changes in the
 * order they were appended (what a replay needs; the order across key groups is not kept, as in
 * Flink's own DSTL).
 *
 * <p>On {@link #getChanges} the reader starts downloading every distinct file of the handle in
 * parallel (when the file is on a distributed file system and the local cache is enabled), then
 * merges the handle's segments by key group in windows of bounded size, decoding each segment one
 * change at a time (see {@code ChangeIterator}). Files on local file systems are read in place;
 * with the cache off every file is, on a download thread and bounded by the stall timeout ({@link
 * InPlaceReads}). Changes of key groups outside the handle's range are skipped; metadata changes
 * are always returned.
 *
 * <p>Errors: a missing, truncated or corrupt file fails the iteration with an exception whose
 * message names the file and the segment offset (an {@link UncheckedIOException}, because the
 * iterator cannot throw checked exceptions).
 *
 * <p>Thread safety: the reader is thread-safe; each returned iterator is for one thread.
 */
@ThreadSafe
public final class DfsChangelogReader
        implements StateChangelogHandleReader<ChangelogStateHandleStreamImpl> {

    private static final Logger LOG = LoggerFactory.getLogger(DfsChangelogReader.class);

    /**
     * At most this many stored (possibly compressed) payload bytes of one handle are held in memory
     * to merge its segments by key group.
     */
    static final long MERGE_WINDOW_BYTES = 64L << 20;

    /**
     * At most this many segments are merged at once: each open segment holds an inflater (native
     * memory), and a handle of many small segments (frequent checkpoints, rare materialization)
     * must not open them all.
     */
    static final int MERGE_WINDOW_SEGMENTS = 256;

    @Nullable private final DownloadCache cache;

    /** Reads in place bounded by the stall timeout (the cache is off), or null: on this thread. */
    @Nullable private final InPlaceReads inPlace;

    private final long windowBytes;
    private final int windowSegments;

    DfsChangelogReader(@Nullable DownloadCache cache, @Nullable InPlaceReads inPlace) {
        this(cache, inPlace, MERGE_WINDOW_BYTES, MERGE_WINDOW_SEGMENTS);
    }

    /** With other merge window limits; for tests. */
    DfsChangelogReader(
            @Nullable DownloadCache cache,
            @Nullable InPlaceReads inPlace,
            long windowBytes,
            int windowSegments) {
        this.cache = cache;
        this.inPlace = inPlace;
        this.windowBytes = windowBytes;
        this.windowSegments = windowSegments;
    }

    @Override
    public CloseableIterator<StateChange> getChanges(ChangelogStateHandleStreamImpl handle)
            throws IOException {
        List<Tuple2<StreamStateHandle, Long>> segments = handle.getHandlesAndOffsets();
        if (cache != null) {
            Set<StreamStateHandle> distinct = new LinkedHashSet<>();
            segments.forEach(s -> distinct.add(s.f0));
            for (StreamStateHandle file : distinct) {
                if (DownloadCache.isCacheable(file)) {
                    cache.prefetch((FileStateHandle) file);
                }
            }
        }
        return new ChangeIterator(segments.iterator(), handle.getKeyGroupRange());
    }

    /**
     * Reads one segment's stored bytes, from the local cache or straight from the file system, and
     * returns its changes for decoding one at a time.
     */
    SegmentChanges readSegment(StreamStateHandle file, long offset) throws IOException {
        String name = ReadUtils.nameOf(file);
        if (offset < 0) {
            throw new CorruptSegmentException(
                    name, offset, "a negative segment offset in the state handle");
        }
        try {
            if (cache != null && DownloadCache.isCacheable(file)) {
                return readThroughCache((FileStateHandle) file, name, offset);
            }
            return inPlace != null
                    ? inPlace.read(file, name, offset)
                    : readInPlace(file, name, offset);
        } catch (CorruptSegmentException e) {
            throw e; // names the file and what is wrong with it
        } catch (InterruptedIOException e) {
            InterruptedIOException named =
                    new InterruptedIOException("Interrupted reading " + segment(name, offset));
            named.initCause(e);
            throw named;
        } catch (IOException e) {
            // every other failure (download, local copy, file system) names the file here
            throw new IOException(
                    "Could not read " + segment(name, offset) + ": " + e.getMessage(), e);
        }
    }

    private static String segment(String file, long offset) {
        return "DSTL segment at offset " + offset + " of file '" + file + "'";
    }

    /** Reads a segment from the local copy of its file, downloading the copy if needed. */
    private SegmentChanges readThroughCache(FileStateHandle remote, String name, long offset)
            throws IOException {
        File local = cache.pin(remote);
        long[] starts = cache.segmentStarts(remote, local);
        if (starts != null && Arrays.binarySearch(starts, offset) < 0) {
            // the copy was verified in full: the handle is wrong, and a new copy would not help
            cache.unpin(remote, local);
            throw new CorruptSegmentException(
                    name,
                    offset,
                    "the state handle's offset is not the start of a segment of the file (its "
                            + starts.length
                            + " segments were verified when it was downloaded)");
        }
        try {
            return readLocal(local, name, offset);
        } catch (IOException first) {
            if (first instanceof ClosedByInterruptException
                    || Thread.currentThread().isInterrupted()) {
                // the task is being cancelled (the interrupt closed the channel): the copy is
                // fine, and other tasks may be reading it
                InterruptedIOException io =
                        new InterruptedIOException("Interrupted reading the local copy " + local);
                io.initCause(first);
                throw io;
            }
            // the local copy went bad after its verification: evict it and read a fresh one
            LOG.warn(
                    "Local copy {} of DSTL file {} could not be read ({}); downloading it again",
                    local,
                    name,
                    first.toString());
            cache.unpin(remote, local);
            cache.evict(remote, local);
            local = null;
            try {
                File fresh = cache.pin(remote);
                try {
                    return readLocal(fresh, name, offset);
                } finally {
                    cache.unpin(remote, fresh);
                }
            } catch (IOException retry) {
                retry.addSuppressed(first);
                throw retry;
            }
        } finally {
            if (local != null) {
                cache.unpin(remote, local);
            }
        }
    }

    /** Reads a segment straight from the file system. */
    private static SegmentChanges readInPlace(StreamStateHandle file, String name, long offset)
            throws IOException {
        try (FSDataInputStream in = DownloadCache.openRemote(file)) {
            return readSegment(in, in, file, name, offset);
        }
    }

    /**
     * Checks the header of the open {@code file} and reads its segment at {@code offset}: seeks
     * {@code in} and reads through {@code reads} ({@code in} itself, or a stream over it that
     * counts progress).
     */
    static SegmentChanges readSegment(
            FSDataInputStream in,
            InputStream reads,
            StreamStateHandle file,
            String name,
            long offset)
            throws IOException {
        SegmentDecoder.readFileHeader(reads, name);
        in.seek(offset);
        long size = file.getStateSize();
        return SegmentDecoder.openSegment(
                new BufferedInputStream(reads), name, offset, size > 0 ? size : -1);
    }

    private static SegmentChanges readLocal(File local, String name, long offset)
            throws IOException {
        try (FileChannel channel = FileChannel.open(local.toPath(), StandardOpenOption.READ)) {
            channel.position(offset);
            InputStream in = Channels.newInputStream(channel);
            return SegmentDecoder.openSegment(
                    new BufferedInputStream(in), name, offset, channel.size());
        }
    }

    /**
     * The changes of one handle: consecutive key-group-ordered segments are merged by key group
     * ({@link KeyGroupMerge}) in windows of at most {@link #MERGE_WINDOW_BYTES} stored bytes and
     * {@link #MERGE_WINDOW_SEGMENTS} segments; a segment in plain append order (written before the
     * key-group order) is read alone. Each window is finished before the next starts, so a key
     * group's changes keep their append order.
     */
    private final class ChangeIterator implements CloseableIterator<StateChange> {

        private final Iterator<Tuple2<StreamStateHandle, Long>> segments;
        private final KeyGroupRange keyGroups;

        /** The window being read (null before the first and after the last). */
        @Nullable private KeyGroupMerge window;

        /** A segment opened while filling the previous window that did not fit into it. */
        @Nullable private SegmentChanges carried;

        private StateChange next;

        ChangeIterator(
                Iterator<Tuple2<StreamStateHandle, Long>> segments, KeyGroupRange keyGroups) {
            this.segments = segments;
            this.keyGroups = keyGroups;
        }

        @Override
        public boolean hasNext() {
            while (next == null) {
                StateChange candidate;
                try {
                    while (window == null || !window.hasNext()) {
                        if (window != null) {
                            window.close();
                            window = null;
                        }
                        window = nextWindow();
                        if (window == null) {
                            return false;
                        }
                    }
                    candidate = window.next();
                } catch (IOException e) {
                    throw new UncheckedIOException(e.getMessage(), e);
                }
                if (candidate.getKeyGroup() == StateChange.META_KEY_GROUP
                        || keyGroups.contains(candidate.getKeyGroup())) {
                    next = candidate;
                }
            }
            return true;
        }

        /** Opens the next window of segments, or returns null after the last segment. */
        @Nullable
        private KeyGroupMerge nextWindow() throws IOException {
            List<SegmentChanges> opened = new ArrayList<>();
            long bytes = 0;
            try {
                while (true) {
                    SegmentChanges segment = carried;
                    carried = null;
                    if (segment == null) {
                        if (!segments.hasNext()) {
                            break;
                        }
                        Tuple2<StreamStateHandle, Long> s = segments.next();
                        segment = readSegment(s.f0, s.f1);
                    }
                    if (opened.isEmpty()) {
                        opened.add(segment);
                        bytes = segment.storedBytes();
                        if (!segment.keyGroupOrdered()) {
                            break; // append order: read alone
                        }
                    } else if (!segment.keyGroupOrdered()
                            || bytes + segment.storedBytes() > windowBytes
                            || opened.size() >= windowSegments) {
                        carried = segment;
                        break;
                    } else {
                        opened.add(segment);
                        bytes += segment.storedBytes();
                    }
                }
                return opened.isEmpty() ? null : new KeyGroupMerge(opened);
            } catch (IOException | RuntimeException e) {
                opened.forEach(SegmentChanges::close);
                throw e;
            }
        }

        @Override
        public StateChange next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            StateChange result = next;
            next = null;
            return result;
        }

        @Override
        public void close() {
            if (window != null) {
                window.close();
                window = null;
            }
            if (carried != null) {
                carried.close();
                carried = null;
            }
        }
    }
}
