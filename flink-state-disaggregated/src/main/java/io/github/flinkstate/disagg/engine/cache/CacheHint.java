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
 * all of its blocks, so a file is fetched in one pass.
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
     */
    public record Entry(String file, boolean whole, long[] offsets) {}

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
                kept.add(new Entry(to, e.whole(), e.offsets()));
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

        /** The memory tier's blocks, per file, once the disk tier is visited; null before. */
        @Nullable private Map<String, Set<Long>> inMemory;

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
                long[] a = Arrays.copyOf(blocks.get(file), counts.get(file));
                Arrays.sort(a);
                int distinct = 0;
                for (int i = 0; i < a.length; i++) {
                    if (i == 0 || a[i] != a[i - 1]) {
                        a[distinct++] = a[i];
                    }
                }
                entries.add(new Entry(file, false, Arrays.copyOf(a, distinct)));
            }
            return entries.isEmpty() ? EMPTY : new CacheHint(entries);
        }
    }
}
