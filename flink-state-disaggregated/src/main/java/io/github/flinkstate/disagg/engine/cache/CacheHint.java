package io.github.flinkstate.disagg.engine.cache;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import javax.annotation.Nullable;

/**
 * What a store's caches held when a snapshot was taken, hottest first: per file, either the whole
 * file (a whole-file copy in the disk tier) or the offsets of its cached data blocks. A snapshot
 * carries it in its manifest (docs/format/disagg-manifest.md, "Cache hint"), so that the warm-up
 * after a restore fetches what the job was reading before the failure instead of guessing by level:
 * with skewed keys the hot blocks are spread over every file, and a warm-up in level order leaves
 * them to arrive one miss, one round trip, at a time.
 *
 * <p>Order: the memory tier's blocks first (the hottest: a hit there does not touch the disk tier's
 * order; among themselves in no particular order), then the disk tier's units from the most
 * recently used. The disk tier's capacity bounds the bytes a hint names on disk; the memory tier's
 * blocks come on top (all of them: a block only in memory counts nothing), so a hint may name up to
 * the memory tier's size more. A file's entry stands where the first of its blocks did, and holds
 * all of its blocks, so a file is fetched in one pass. It marks which of them the memory tier held
 * ({@link Entry#memoryOffsets()}) and which of those the disk tier did not ({@link
 * Entry#memoryOnlyOffsets()}): the warm-up loads the memory tier's into the memory tier, and stores
 * on disk all others and those both tiers held, so the two tiers start as they were. Put all on
 * disk, the blocks only the memory tier held took the room of as many of the disk tier's, and a
 * restore started with the disk tier's coverage only (remote read scenario, Zipf keys at a 50%
 * budget: 0.17-0.19 remote reads per get in the first seconds against 0.154 before the checkpoint;
 * 0.153 once the tier had room for both).
 *
 * <p>It is only a hint: the blocks it names are verified like any other when fetched, offsets that
 * no longer start a block are passed over, and a restore with another cache size fills what fits.
 *
 * <p>Thread safety: immutable (the offset arrays are never modified after construction).
 *
 * @param entries one per file, hottest first
 */
public record CacheHint(List<Entry> entries) {

    /** No hint: the warm-up goes by level. */
    public static final CacheHint EMPTY = new CacheHint(List.of());

    /**
     * The cached part of one file.
     *
     * @param file the file's path
     * @param whole whether the file was cached whole (then {@code offsets} is empty)
     * @param offsets the offsets of its cached data blocks, strictly ascending
     * @param memoryOffsets those of {@code offsets} whose blocks the memory tier held, strictly
     *     ascending (empty for a whole file): the warm-up loads them into the memory tier
     * @param memoryOnlyOffsets those of {@code memoryOffsets} the capture did not find in the disk
     *     tier (it did not hold them, or held them in units past the byte limit), strictly
     *     ascending: the warm-up leaves them out of the disk fills while the memory tier holds them
     *     (those it could not load there go to disk); every other block it names goes to the disk
     *     tier
     */
    public record Entry(
            String file,
            boolean whole,
            long[] offsets,
            long[] memoryOffsets,
            long[] memoryOnlyOffsets) {

        private static final long[] NONE = new long[0];

        /** An entry that names no block of the memory tier. */
        public Entry(String file, boolean whole, long[] offsets) {
            this(file, whole, offsets, NONE, NONE);
        }
    }

    public CacheHint {
        entries = List.copyOf(entries);
    }

    public boolean isEmpty() {
        return entries.isEmpty();
    }

    /** Number of blocks named, whole files not counted. */
    public long blockCount() {
        long n = 0;
        for (Entry e : entries) {
            n += e.offsets().length;
        }
        return n;
    }

    /** Number of blocks named as the memory tier's. */
    public long memoryBlockCount() {
        long n = 0;
        for (Entry e : entries) {
            n += e.memoryOffsets().length;
        }
        return n;
    }

    /** The entry of {@code file}, or null. */
    @Nullable
    public Entry entryOf(String file) {
        for (Entry e : entries) {
            if (e.file().equals(file)) {
                return e;
            }
        }
        return null;
    }

    /**
     * The entries whose file {@code rename} maps to a path (null: left out), under that path; for a
     * restore, which keeps the entries of files it reads in place and unclipped.
     */
    public CacheHint map(UnaryOperator<String> rename) {
        List<Entry> kept = new ArrayList<>();
        for (Entry e : entries) {
            String to = rename.apply(e.file());
            if (to != null) {
                kept.add(
                        new Entry(
                                to,
                                e.whole(),
                                e.offsets(),
                                e.memoryOffsets(),
                                e.memoryOnlyOffsets()));
            }
        }
        return new CacheHint(kept);
    }

    /**
     * The hints of several snapshots merged for a store restored from all of them (a rescale): each
     * hint's first entry, then each one's second, and so on, so that no snapshot's hottest files
     * wait for all of another's. A file named twice keeps its first place.
     */
    public static CacheHint interleave(List<CacheHint> hints) {
        Map<String, Entry> merged = new LinkedHashMap<>();
        for (int i = 0; ; i++) {
            boolean any = false;
            for (CacheHint h : hints) {
                if (i < h.entries().size()) {
                    any = true;
                    Entry e = h.entries().get(i);
                    merged.putIfAbsent(e.file(), e);
                }
            }
            if (!any) {
                return new CacheHint(new ArrayList<>(merged.values()));
            }
        }
    }

    /**
     * What {@code cache} (memory tier, then disk tier) holds of {@code files}, hottest first, up to
     * about {@code limitBytes} of cached bytes; empty without a disk tier. Takes the memory's lock
     * for one pass over its blocks, then the disk tier's briefly per slab ({@link
     * DiskCache#visitRecentFirst}), never both at once.
     */
    public static CacheHint capture(BlockCache cache, Set<String> files, long limitBytes) {
        DiskCache disk = cache.disk();
        if (disk == null || limitBytes <= 0) {
            return EMPTY;
        }
        Builder b = new Builder(files, limitBytes);
        cache.visitResidentBlocks(b);
        b.diskPhase();
        disk.visitRecentFirst(b);
        return b.build();
    }

    /** Receives cached units, hottest first; returns false to stop. */
    public interface Visitor {
        /** A whole-file copy of {@code file}, {@code length} bytes on local disk. */
        boolean wholeFile(String file, long length);

        /**
         * The block of {@code file} at {@code offset}, {@code length} bytes in the visited tier.
         */
        boolean block(String file, long offset, int length);
    }

    /**
     * Collects a hint from the visits of the memory tier and then ({@link #diskPhase}) the disk
     * tier. Counts bytes as the disk tier stores them, each block once: the memory tier's blocks
     * (decompressed there) when the disk tier's visit finds them (it usually holds them too; a
     * block only in memory counts nothing), and a file's whole copy instead of its blocks counted
     * before.
     */
    private static final class Builder implements Visitor {
        private final Set<String> files;
        private final long limitBytes;
        private final Map<String, long[]> blocks = new HashMap<>();
        private final Map<String, Integer> counts = new HashMap<>();
        private final Map<String, Long> blockBytes = new HashMap<>();
        private final Set<String> whole = new HashSet<>();
        private final List<String> order = new ArrayList<>();

        /**
         * The memory tier's blocks, per file, once the disk tier is visited; its visit takes out
         * those it finds, so what is left at the end are the blocks only the memory tier held (or
         * held by disk units past the limit). Null before.
         */
        @Nullable private Map<String, Set<Long>> inMemory;

        /** The memory tier's blocks, per file, sorted, each once. */
        private final Map<String, long[]> memoryPart = new HashMap<>();

        private long bytes;

        Builder(Set<String> files, long limitBytes) {
            this.files = files;
            this.limitBytes = limitBytes;
        }

        /** The memory tier's visit is over; what follows is the disk tier's. */
        void diskPhase() {
            inMemory = new HashMap<>();
            blocks.forEach(
                    (file, offsets) -> {
                        Set<Long> set = new HashSet<>();
                        for (int i = 0; i < counts.get(file); i++) {
                            set.add(offsets[i]);
                        }
                        inMemory.put(file, set);
                        memoryPart.put(file, sortedDistinct(offsets, counts.get(file)));
                    });
        }

        @Override
        public boolean wholeFile(String file, long length) {
            if (bytes >= limitBytes) {
                return false;
            }
            if (files.contains(file) && whole.add(file)) {
                if (!counts.containsKey(file)) {
                    order.add(file);
                }
                bytes += length - blockBytes.getOrDefault(file, 0L);
            }
            return true;
        }

        @Override
        public boolean block(String file, long offset, int length) {
            if (bytes >= limitBytes) {
                return false;
            }
            if (!files.contains(file) || whole.contains(file)) {
                return true;
            }
            if (inMemory == null) {
                add(file, offset); // the memory tier's: counted when the disk tier's visit finds it
                return true;
            }
            Set<Long> memoryBlocks = inMemory.get(file);
            if (memoryBlocks != null && memoryBlocks.remove(offset)) {
                count(file, length); // listed with the memory tier already
                return true;
            }
            add(file, offset);
            count(file, length);
            return true;
        }

        private void count(String file, int length) {
            blockBytes.merge(file, (long) length, Long::sum);
            bytes += length;
        }

        private void add(String file, long offset) {
            Integer n = counts.get(file);
            long[] a = blocks.get(file);
            if (n == null) {
                order.add(file);
                n = 0;
                a = new long[16];
            } else if (n == a.length) {
                a = Arrays.copyOf(a, n * 2);
            }
            a[n] = offset;
            blocks.put(file, a);
            counts.put(file, n + 1);
        }

        CacheHint build() {
            List<Entry> entries = new ArrayList<>(order.size());
            for (String file : order) {
                if (whole.contains(file)) {
                    entries.add(new Entry(file, true, new long[0]));
                    continue;
                }
                long[] memory = memoryPart.get(file);
                long[] memoryOnly = new long[0];
                Set<Long> notFoundOnDisk = inMemory == null ? null : inMemory.get(file);
                if (notFoundOnDisk != null) {
                    memoryOnly = new long[notFoundOnDisk.size()];
                    int i = 0;
                    for (long offset : notFoundOnDisk) {
                        memoryOnly[i++] = offset;
                    }
                    Arrays.sort(memoryOnly);
                }
                entries.add(
                        new Entry(
                                file,
                                false,
                                sortedDistinct(blocks.get(file), counts.get(file)),
                                memory == null ? new long[0] : memory,
                                memoryOnly));
            }
            return entries.isEmpty() ? EMPTY : new CacheHint(entries);
        }

        /** The first {@code n} values of {@code a}, sorted, each once (a new array). */
        private static long[] sortedDistinct(long[] a, int n) {
            long[] sorted = Arrays.copyOf(a, n);
            Arrays.sort(sorted);
            int distinct = 0;
            for (int i = 0; i < sorted.length; i++) {
                if (i == 0 || sorted[i] != sorted[i - 1]) {
                    sorted[distinct++] = sorted[i];
                }
            }
            return Arrays.copyOf(sorted, distinct);
        }
    }
}
