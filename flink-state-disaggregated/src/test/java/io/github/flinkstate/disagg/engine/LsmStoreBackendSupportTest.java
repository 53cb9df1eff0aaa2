package io.github.flinkstate.disagg.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.disagg.engine.iterator.LsmIterator;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.key.KeyRange;
import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import io.github.flinkstate.testing.fs.Latency;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The engine features the keyed backend relies on: read snapshots that do not see later writes,
 * appends that never overwrite, iterator reseeks, restores through a path resolver, and rehoming a
 * restored file into the store's own directory.
 */
class LsmStoreBackendSupportTest {

    @TempDir File tmp;

    private static final KeyGroupSpan SPAN8 = KeyGroupSpan.of(0, 7);

    private LsmOptions options(String dir) {
        return new LsmOptions(
                        FileSystem.getLocalFileSystem(),
                        new Path(new Path(tmp.toURI()), dir),
                        KeyGroupSpan.of(0, 7))
                .backgroundCompaction(false)
                .memtableBytes(64 * 1024);
    }

    private static byte[] key(int kg, String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        byte[] k = new byte[b.length + 2];
        k[0] = (byte) (kg >>> 8);
        k[1] = (byte) kg;
        System.arraycopy(b, 0, k, 2, b.length);
        return k;
    }

    private static List<String> drain(LsmIterator it) throws Exception {
        List<String> out = new ArrayList<>();
        try (it) {
            for (; it.isValid(); it.next()) {
                out.add(new String(it.value(), StandardCharsets.UTF_8));
            }
        }
        return out;
    }

    @Test
    void readSnapshot_doesNotSeeLaterWrites_evenAfterFlushAndCompaction() throws Exception {
        try (LsmStore store = LsmStore.open(options("s"))) {
            store.put(key(1, "a"), "a1".getBytes(StandardCharsets.UTF_8));
            store.put(key(1, "b"), "b1".getBytes(StandardCharsets.UTF_8));
            try (LsmReadSnapshot snap = store.readSnapshot()) {
                store.put(key(1, "a"), "a2".getBytes(StandardCharsets.UTF_8));
                store.delete(key(1, "b"));
                store.put(key(1, "c"), "c2".getBytes(StandardCharsets.UTF_8));
                store.flush();
                store.compactAll();
                assertThat(new String(snap.get(key(1, "a")), StandardCharsets.UTF_8))
                        .isEqualTo("a1");
                assertThat(drain(snap.scan(KeyRange.ALL))).containsExactly("a1", "b1");
            }
            assertThat(drain(store.scanAll())).containsExactly("a2", "c2");
            store.checkInvariants();
        }
    }

    /**
     * A closed read snapshot refuses further reads. Found in a review: a scan after {@code close()}
     * pinned the released view again and released it a second time when its iterator closed, which
     * dropped the store's current version and deleted its files.
     */
    @Test
    void aClosedReadSnapshot_refusesReads_andReleasesNothingTwice() throws Exception {
        try (LsmStore store = LsmStore.open(options("s"))) {
            store.put(key(1, "a"), "a1".getBytes(StandardCharsets.UTF_8));
            store.flush();
            LsmReadSnapshot snap = store.readSnapshot();
            snap.close();
            assertThatThrownBy(() -> snap.scan(KeyRange.ALL))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("closed");
            assertThatThrownBy(() -> snap.get(key(1, "a")))
                    .isInstanceOf(IllegalStateException.class);
            store.checkInvariants();
            assertThat(new String(store.get(key(1, "a")), StandardCharsets.UTF_8)).isEqualTo("a1");
        }
    }

    /**
     * Each read snapshot freezes the active memtable; like a write or a checkpoint it waits while
     * the flush is {@code maxImmutableMemtables} behind. Found in a review: a write and a key
     * listing per record (a broadcast function's {@code applyToKeyedState}) left 1,989 frozen
     * memtables for 2,000 calls, each probed by every get and charged to the slot's budget.
     */
    @Test
    void readSnapshots_doNotPileUpFrozenMemtables() throws Exception {
        InjectingFileSystem slow = new InjectingFileSystem(FileSystem.getLocalFileSystem());
        slow.latency(FsOp.CREATE, Latency.fixed(Duration.ofMillis(2)));
        LsmOptions o =
                new LsmOptions(slow, new Path(new Path(tmp.toURI()), "rs"), KeyGroupSpan.of(0, 7))
                        .backgroundCompaction(false)
                        .maxImmutableMemtables(2);
        try (LsmStore store = LsmStore.open(o)) {
            int most = 0;
            for (int i = 0; i < 300; i++) {
                store.put(key(i % 8, "k" + i), ("v" + i).getBytes(StandardCharsets.UTF_8));
                store.readSnapshot().close();
                most = Math.max(most, memtables(store));
            }
            assertThat(most).as("memtables at most, active included").isLessThanOrEqualTo(3);
            for (int i = 0; i < 300; i++) {
                assertThat(new String(store.get(key(i % 8, "k" + i)), StandardCharsets.UTF_8))
                        .isEqualTo("v" + i);
            }
        }
    }

    /** The number of memtables, from {@link LsmStore#describe()} ("... memtables=N"). */
    private static int memtables(LsmStore store) {
        String d = store.describe();
        return Integer.parseInt(d.substring(d.lastIndexOf('=') + 1).trim());
    }

    @Test
    void append_keepsEveryValueInOrder_acrossFlushes_andDeletePrefixClearsThem() throws Exception {
        try (LsmStore store = LsmStore.open(options("s"))) {
            byte[] list = key(3, "list");
            store.append(list, "x".getBytes(StandardCharsets.UTF_8));
            store.flush();
            store.append(list, "y".getBytes(StandardCharsets.UTF_8));
            store.append(list, "x".getBytes(StandardCharsets.UTF_8));
            assertThat(drain(store.scanPrefix(list))).containsExactly("x", "y", "x");
            store.deletePrefix(list);
            store.append(list, "z".getBytes(StandardCharsets.UTF_8));
            assertThat(drain(store.scanPrefix(list))).containsExactly("z");
        }
    }

    @Test
    void seek_repositionsWithinTheSameIterator() throws Exception {
        try (LsmStore store = LsmStore.open(options("s"))) {
            for (int kg = 0; kg < 8; kg++) {
                store.put(key(kg, "k"), ("v" + kg).getBytes(StandardCharsets.UTF_8));
            }
            try (LsmIterator it = store.scanAll()) {
                it.seek(key(5, ""));
                assertThat(new String(it.value(), StandardCharsets.UTF_8)).isEqualTo("v5");
                it.seek(key(2, "k"));
                assertThat(new String(it.value(), StandardCharsets.UTF_8)).isEqualTo("v2");
            }
        }
    }

    @Test
    void restoreThroughResolver_thenRehome_movesReadsToACopyAndKeepsTheOriginal() throws Exception {
        LsmSnapshot snap;
        try (LsmStore source = LsmStore.open(options("src"))) {
            for (int i = 0; i < 500; i++) {
                source.put(key(i % 8, "k" + i), ("v" + i).getBytes(StandardCharsets.UTF_8));
            }
            snap = source.snapshot();
        }
        // the checkpoint's files were moved: the resolver maps recorded paths to the new place
        Path moved = new Path(new Path(tmp.toURI()), "moved");
        FileSystem fs = FileSystem.getLocalFileSystem();
        fs.mkdirs(moved);
        for (String f : snap.files()) {
            fs.rename(new Path(f), new Path(moved, new Path(f).getName()));
        }
        try (LsmStore store =
                LsmStore.open(
                        options("dst"),
                        List.of(snap.manifest()),
                        p -> new Path(moved, new Path(p).getName()).toString())) {
            assertThat(new String(store.get(key(3, "k3")), StandardCharsets.UTF_8)).isEqualTo("v3");
            String original = store.liveFiles().get(0);
            String copy = store.rehome(original);
            assertThat(copy).isNotNull().isNotEqualTo(original);
            assertThat(store.liveFiles()).contains(copy).doesNotContain(original);
            store.awaitQueuedDeletes();
            assertThat(fs.exists(new Path(original))).as("restored original kept").isTrue();
            assertThat(store.rehome(original)).isNull();
            assertThat(new String(store.get(key(3, "k3")), StandardCharsets.UTF_8)).isEqualTo("v3");
            assertThat(store.stats().filesRehomed()).isEqualTo(1);
            store.checkInvariants();
        }
    }

    @Test
    void rehomeAll_copiesInParallel_andAFailedCopyLeavesNoCopyBehind() throws Exception {
        LsmSnapshot snap;
        try (LsmStore source = LsmStore.open(options("src2"))) {
            for (int round = 0; round < 6; round++) {
                for (int i = 0; i < 200; i++) {
                    source.put(key(i % 8, "r" + round + "k" + i), ("v" + i).getBytes());
                }
                source.flush();
            }
            snap = source.snapshot();
        }
        assertThat(snap.files()).hasSizeGreaterThanOrEqualTo(6);
        FileSystem fs = FileSystem.getLocalFileSystem();
        Path dst = new Path(new Path(tmp.toURI()), "dst2");
        try (LsmStore store =
                LsmStore.open(options("dst2").copyThreads(3), List.of(snap.manifest()))) {
            List<String> inherited = store.liveFiles();
            // one original vanishes: that copy fails, the others must not stay behind
            fs.delete(new Path(inherited.get(inherited.size() - 1)), false);
            assertThatThrownBy(() -> store.rehomeAll(inherited)).isInstanceOf(IOException.class);
            assertThat(store.liveFiles()).containsExactlyElementsOf(inherited);
            assertThat(sstFiles(fs, dst)).as("copies left after the failure").isEmpty();

            List<String> readable = inherited.subList(0, inherited.size() - 1);
            Map<String, String> moved = store.rehomeAll(readable);
            assertThat(moved.keySet()).containsExactlyInAnyOrderElementsOf(readable);
            assertThat(sstFiles(fs, dst)).hasSize(readable.size());
            assertThat(store.stats().filesRehomed()).isEqualTo(readable.size());
            store.checkInvariants();
        }
    }

    /**
     * A rehomed copy is synced before it replaces its original, as the store's own files are: a
     * checkpoint names the copy, and a close is not durable on every file system (the local one,
     * HDFS without hsync). The copies used to be only closed. Found in a review.
     */
    @Test
    void rehomedCopies_areSyncedBeforeTheyAreUsed() throws Exception {
        InjectingFileSystem injecting = InjectingFileSystem.shared();
        injecting.reset();
        LsmSnapshot snap;
        try (LsmStore source =
                LsmStore.open(
                        new LsmOptions(injecting, injecting.path(new File(tmp, "src3")), SPAN8)
                                .backgroundCompaction(false)
                                .memtableBytes(64 * 1024))) {
            for (int i = 0; i < 500; i++) {
                source.put(key(i % 8, "k" + i), ("v" + i).getBytes(StandardCharsets.UTF_8));
            }
            source.flush();
            snap = source.snapshot();
        }
        try (LsmStore store =
                LsmStore.open(
                        new LsmOptions(injecting, injecting.path(new File(tmp, "dst3")), SPAN8)
                                .backgroundCompaction(false)
                                .memtableBytes(64 * 1024),
                        List.of(snap.manifest()))) {
            Map<String, String> copies = store.rehomeAll(store.liveFiles());
            assertThat(copies).isNotEmpty();
            for (String copy : copies.values()) {
                assertThat(
                                injecting
                                        .counters()
                                        .callsUnder(
                                                FsOp.SYNC, InjectingFileSystem.key(new Path(copy))))
                        .as("syncs of %s", copy)
                        .isEqualTo(1);
            }
        }
    }

    /**
     * A file that arrives through two handles with different clips (1 -> 2 -> 1 before a compaction
     * rewrote it) is one file: rehoming copies it once and names both of its entries through that
     * copy. Found in a review: each entry got a copy of its own and only the second was reported,
     * so a failure later in the same call deleted the first copy while the version still read it.
     */
    /** One store's snapshot of a single compacted file, and the manifests of its two halves. */
    private record SplitInTwo(LsmSnapshot whole, List<byte[]> halves) {}

    /**
     * 1 -> 2: a store in {@code name} writes one file below level 0 (where clip cleanups rewrite
     * one entry at a time), and two stores of key groups 0-3 and 4-7 open its snapshot.
     */
    private SplitInTwo oneFileSplitInTwo(String name) throws Exception {
        LsmSnapshot whole;
        try (LsmStore source = LsmStore.open(options(name))) {
            for (int i = 0; i < 400; i++) {
                source.put(key(i % 8, "k" + i), ("v" + i).getBytes(StandardCharsets.UTF_8));
            }
            source.flush();
            source.compactAll();
            whole = source.snapshot();
        }
        List<byte[]> halves = new ArrayList<>();
        for (KeyGroupSpan half : List.of(KeyGroupSpan.of(0, 3), KeyGroupSpan.of(4, 7))) {
            LsmOptions o =
                    new LsmOptions(
                                    FileSystem.getLocalFileSystem(),
                                    new Path(new Path(tmp.toURI()), name + "-half" + half.start()),
                                    half)
                            .backgroundCompaction(false);
            try (LsmStore split = LsmStore.open(o, List.of(whole.manifest()));
                    LsmSnapshot s = split.snapshot()) {
                halves.add(s.manifest());
            }
        }
        return new SplitInTwo(whole, halves);
    }

    @Test
    void rehomeAll_ofAFileArrivingThroughTwoHandles_copiesItOnce() throws Exception {
        SplitInTwo split = oneFileSplitInTwo("one");
        LsmSnapshot whole = split.whole();
        List<byte[]> halves = split.halves();
        assertThat(whole.files()).hasSize(1);
        FileSystem fs = FileSystem.getLocalFileSystem();
        Path dst = new Path(new Path(tmp.toURI()), "merged");
        try (LsmStore merged = LsmStore.open(options("merged"), halves)) {
            String original = whole.files().get(0);
            assertThat(merged.liveFiles()).containsExactly(original, original);
            Map<String, String> moved = merged.rehomeAll(List.of(original));
            assertThat(sstFiles(fs, dst)).as("copies of the one file").hasSize(1);
            String copy = moved.get(original);
            assertThat(merged.liveFiles()).containsExactly(copy, copy);
            assertThat(merged.stats().filesRehomed()).isEqualTo(1);
            checkAll(merged);

            // the copy is deleted once no entry names it, not when the first one goes
            assertThat(merged.compactOnce()).as("clip cleanup of one entry").isTrue();
            assertThat(merged.liveFiles()).containsOnlyOnce(copy);
            merged.awaitQueuedDeletes();
            assertThat(fs.exists(new Path(copy))).isTrue();
            checkAll(merged);
            assertThat(merged.compactOnce()).as("clip cleanup of the other").isTrue();
            assertThat(merged.liveFiles()).doesNotContain(copy);
            merged.awaitQueuedDeletes(); // deleted on the store's delete thread
            assertThat(fs.exists(new Path(copy))).isFalse();
            checkAll(merged);
        }
    }

    /**
     * A file that arrived through two handles keeps its reader (and so its parsed metadata and open
     * streams) when a compaction rewrites one of its two entries: the other entry still reads it.
     * Found in a review: the first entry's end evicted the reader, and the next reads of the other
     * half opened the file again.
     */
    @Test
    void aFileArrivingThroughTwoHandles_staysOpen_whenACompactionRewritesOneEntry()
            throws Exception {
        SplitInTwo split = oneFileSplitInTwo("one2");
        LsmSnapshot whole = split.whole();
        List<byte[]> halves = split.halves();
        InjectingFileSystem counted = new InjectingFileSystem(FileSystem.getLocalFileSystem());
        LsmOptions mergedOptions =
                new LsmOptions(
                                counted,
                                new Path(new Path(tmp.toURI()), "merged2"),
                                KeyGroupSpan.of(0, 7))
                        .backgroundCompaction(false);
        String original = whole.files().get(0);
        String key = InjectingFileSystem.key(new Path(original));
        try (LsmStore merged = LsmStore.open(mergedOptions, halves)) {
            checkAll(merged);
            assertThat(merged.compactOnce()).as("clip cleanup of one entry").isTrue();
            assertThat(merged.liveFiles()).containsOnlyOnce(original);
            long opens = counted.counters().calls(FsOp.OPEN, key);
            checkAll(merged);
            assertThat(counted.counters().calls(FsOp.OPEN, key))
                    .as("opens of the file the other entry still reads")
                    .isEqualTo(opens);
        }
        whole.release();
    }

    private static void checkAll(LsmStore store) throws IOException {
        for (int i = 0; i < 400; i++) {
            assertThat(new String(store.get(key(i % 8, "k" + i)), StandardCharsets.UTF_8))
                    .isEqualTo("v" + i);
        }
        store.checkInvariants();
    }

    private static List<String> sstFiles(FileSystem fs, Path dir) throws IOException {
        List<String> out = new ArrayList<>();
        if (fs.exists(dir)) {
            for (FileStatus s : fs.listStatus(dir)) {
                if (s.getPath().getName().endsWith(".sst")) {
                    out.add(s.getPath().getName());
                }
            }
        }
        return out;
    }
}
