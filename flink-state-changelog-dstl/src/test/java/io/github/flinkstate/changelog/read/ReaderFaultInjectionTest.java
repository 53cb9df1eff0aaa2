package io.github.flinkstate.changelog.read;

import static io.github.flinkstate.changelog.testutils.Changes.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.changelog.DfsBatchedChangelogStorage;
import io.github.flinkstate.changelog.DfsBatchedChangelogStorageFactory;
import io.github.flinkstate.changelog.DfsChangelogOptions;
import io.github.flinkstate.changelog.format.SegmentFormat;
import io.github.flinkstate.changelog.testutils.Changes;
import io.github.flinkstate.changelog.testutils.TestStorages;
import io.github.flinkstate.changelog.upload.DfsChangelogWriter;
import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.Hang;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.io.InterruptedIOException;
import java.io.RandomAccessFile;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.changelog.ChangelogStateHandleStreamImpl;
import org.apache.flink.runtime.state.changelog.SequenceNumber;
import org.apache.flink.runtime.state.changelog.StateChange;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.ExceptionUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Restore-side reading: corrupt, truncated and missing files fail with messages naming the file and
 * offset, both through the download cache ({@code inject://} claims to be distributed) and when
 * reading in place ({@code file://}); the cache downloads each file once.
 */
class ReaderFaultInjectionTest {

    private static final InjectingFileSystem FS = InjectingFileSystem.shared();

    private static final KeyGroupRange RANGE = KeyGroupRange.of(0, 3);

    @TempDir File tmp;

    private DfsBatchedChangelogStorage storage;
    private DfsChangelogStorageView view;

    @BeforeEach
    void resetFaults() {
        FS.reset();
    }

    @AfterEach
    void close() throws Exception {
        if (view != null) {
            view.close();
        }
        if (storage != null) {
            TestStorages.closeAndAwait(storage);
        }
    }

    private Path base(boolean distributed) {
        File dir = new File(tmp, "dfs");
        return distributed ? FS.path(dir) : new Path(dir.toURI());
    }

    /** Writes three checkpoints' worth of changes, one file each, and returns the last handle. */
    private ChangelogStateHandleStreamImpl writeHandle(boolean distributed) throws Exception {
        storage = TestStorages.storage(TestStorages.config(base(distributed)), new File(tmp, "w"));
        DfsChangelogWriter writer = storage.createWriter("op", RANGE, null);
        ChangelogStateHandleStreamImpl handle = null;
        for (int cp = 1; cp <= 3; cp++) {
            writer.append(cp, bytes("v" + cp));
            handle = writer.persist(SequenceNumber.of(0), cp).get().getJobManagerOwnedSnapshot();
        }
        Configuration readConfig = new Configuration();
        readConfig.set(CoreOptions.TMP_DIRS, new File(tmp, "cache").getAbsolutePath());
        view = new DfsBatchedChangelogStorageFactory().createStorageView(readConfig);
        return handle;
    }

    /** Replaces the read view by one with {@code option} set to {@code value}. */
    private void reopenView(ConfigOption<Duration> option, Duration value) throws Exception {
        view.close();
        Configuration config = new Configuration();
        config.set(CoreOptions.TMP_DIRS, new File(tmp, "cache").getAbsolutePath());
        config.set(option, value);
        view = new DfsBatchedChangelogStorageFactory().createStorageView(config);
    }

    /** Opens on this test's files only (the file system is shared by every test of the JVM). */
    private long opens() {
        return FS.counters().callsUnder(FsOp.OPEN, InjectingFileSystem.key(new File(tmp, "dfs")));
    }

    private static File localFile(ChangelogStateHandleStreamImpl handle, int segment) {
        FileStateHandle file = (FileStateHandle) handle.getHandlesAndOffsets().get(segment).f0;
        return new File(file.getFilePath().toUri().getPath());
    }

    private static long offset(ChangelogStateHandleStreamImpl handle, int segment) {
        return handle.getHandlesAndOffsets().get(segment).f1;
    }

    @Test
    void cache_downloadsEachFileOnce_andPrefetchesAllFiles() throws Exception {
        ChangelogStateHandleStreamImpl handle = writeHandle(true);
        assertThat(Changes.read(view.createReader(), handle))
                .containsExactly("1:v1", "2:v2", "3:v3");
        assertThat(opens()).isEqualTo(3);
        assertThat(view.cachedFiles()).isEqualTo(3);
        assertThat(Changes.read(view.createReader(), handle))
                .containsExactly("1:v1", "2:v2", "3:v3");
        assertThat(opens()).isEqualTo(3);
    }

    @Test
    void keyGroupsOutsideTheHandleRange_areSkipped() throws Exception {
        ChangelogStateHandleStreamImpl handle = writeHandle(false);
        ChangelogStateHandleStreamImpl narrowed =
                (ChangelogStateHandleStreamImpl) handle.getIntersection(KeyGroupRange.of(2, 3));
        assertThat(Changes.read(view.createReader(), narrowed)).containsExactly("2:v2", "3:v3");
    }

    @ParameterizedTest(name = "distributed={0}")
    @ValueSource(booleans = {true, false})
    void corruptSegment_failsNamingFileAndOffset(boolean distributed) throws Exception {
        ChangelogStateHandleStreamImpl handle = writeHandle(distributed);
        File file = localFile(handle, 1);
        long offset = offset(handle, 1);
        try (RandomAccessFile raf = new RandomAccessFile(file, "rw")) {
            long pos = offset + SegmentFormat.SEGMENT_HEADER_SIZE;
            raf.seek(pos);
            int b = raf.read();
            raf.seek(pos);
            raf.write(b ^ 0xFF);
        }
        assertThatThrownBy(() -> Changes.read(view.createReader(), handle))
                .hasMessageContaining(file.getName())
                .hasMessageContaining("offset " + offset)
                .hasMessageContaining("checksum mismatch");
    }

    /**
     * A corrupt stored length in a segment header (the header's checksum is checked with the
     * payload, after it was read) fails naming the file and offset before anything is allocated.
     * Found in a review: the reader allocated the length it read (up to 2 GiB) and failed with an
     * OutOfMemoryError, or read to the end of the file.
     */
    @ParameterizedTest(name = "distributed={0}")
    @ValueSource(booleans = {true, false})
    void corruptSegmentLength_failsNamingFileAndOffset(boolean distributed) throws Exception {
        ChangelogStateHandleStreamImpl handle = writeHandle(distributed);
        File file = localFile(handle, 1);
        long offset = offset(handle, 1);
        try (RandomAccessFile raf = new RandomAccessFile(file, "rw")) {
            long pos = offset + 16; // the stored length: bytes 16-19 of the segment header
            raf.seek(pos);
            int b = raf.read();
            raf.seek(pos);
            raf.write(b | 0x60); // + 1.5 GiB
        }
        assertThatThrownBy(() -> Changes.read(view.createReader(), handle))
                .isNotInstanceOf(OutOfMemoryError.class)
                .hasMessageContaining(file.getName())
                .hasMessageContaining("offset " + offset)
                .hasMessageContaining("beyond the end of the file");
    }

    @ParameterizedTest(name = "distributed={0}")
    @ValueSource(booleans = {true, false})
    void truncatedFile_failsNamingFileAndOffset(boolean distributed) throws Exception {
        ChangelogStateHandleStreamImpl handle = writeHandle(distributed);
        File file = localFile(handle, 2);
        long offset = offset(handle, 2);
        try (RandomAccessFile raf = new RandomAccessFile(file, "rw")) {
            raf.setLength(raf.length() - 3);
        }
        List<String> read = new ArrayList<>();
        assertThatThrownBy(() -> read.addAll(Changes.read(view.createReader(), handle)))
                .hasMessageContaining(file.getName())
                .hasMessageContaining("offset " + offset)
                .hasMessageContaining("truncated");
    }

    @ParameterizedTest(name = "distributed={0}")
    @ValueSource(booleans = {true, false})
    void missingFile_failsNamingFileAndOffset(boolean distributed) throws Exception {
        ChangelogStateHandleStreamImpl handle = writeHandle(distributed);
        File file = localFile(handle, 0);
        assertThat(file.delete()).isTrue();
        assertThatThrownBy(() -> Changes.read(view.createReader(), handle))
                .hasMessageContaining(file.getName())
                .hasMessageContaining("offset " + offset(handle, 0))
                .hasMessageContaining("missing");
    }

    /**
     * A handle with a negative segment offset (corrupt checkpoint metadata) fails naming the file
     * and the offset, on both read paths. Found in a review: through the download cache it failed
     * with an {@code IllegalArgumentException} without a message.
     */
    @ParameterizedTest(name = "distributed={0}")
    @ValueSource(booleans = {true, false})
    void aNegativeOffset_failsNamingFileAndOffset(boolean distributed) throws Exception {
        ChangelogStateHandleStreamImpl handle = writeHandle(distributed);
        StreamStateHandle file = handle.getHandlesAndOffsets().get(0).f0;
        ChangelogStateHandleStreamImpl broken =
                new ChangelogStateHandleStreamImpl(
                        List.of(Tuple2.of(file, -1L)), RANGE, 100, 100, "dfs-batched");
        assertThatThrownBy(() -> Changes.read(view.createReader(), broken))
                .hasMessageContaining(localFile(handle, 0).getName())
                .hasMessageContaining("offset -1");
    }

    /**
     * An offset that is not where a segment of a verified local copy starts is the handle's fault:
     * the restore fails naming the file and the offset without downloading the file again. Before,
     * the reader took the failure for a damaged copy, evicted it and downloaded the whole file once
     * more before failing the same way.
     */
    @Test
    void anOffsetInsideASegment_failsWithoutDownloadingAgain() throws Exception {
        ChangelogStateHandleStreamImpl handle = writeHandle(true);
        assertThat(Changes.read(view.createReader(), handle))
                .containsExactly("1:v1", "2:v2", "3:v3");
        assertThat(opens()).isEqualTo(3);
        StreamStateHandle file = handle.getHandlesAndOffsets().get(0).f0;
        long inside = offset(handle, 0) + 1;
        ChangelogStateHandleStreamImpl broken =
                new ChangelogStateHandleStreamImpl(
                        List.of(Tuple2.of(file, inside)), RANGE, 100, 100, "dfs-batched");
        assertThatThrownBy(() -> Changes.read(view.createReader(), broken))
                .hasMessageContaining(localFile(handle, 0).getName())
                .hasMessageContaining("offset " + inside)
                .hasMessageContaining("not the start of a segment");
        assertThat(opens()).as("no second download").isEqualTo(3);
        assertThat(Changes.read(view.createReader(), handle))
                .as("the verified copy is still used")
                .containsExactly("1:v1", "2:v2", "3:v3");
        assertThat(opens()).isEqualTo(3);
    }

    /**
     * A file whose file system cannot be reached at all (here: no file system for its scheme, as
     * with a plugin missing on the TaskManager) fails naming the file; the file system's message
     * names only the scheme. Found in a review of the read path's error messages.
     */
    @Test
    void unreachableFileSystem_failsNamingTheFile() throws Exception {
        writeHandle(true);
        ChangelogStateHandleStreamImpl unreachable =
                new ChangelogStateHandleStreamImpl(
                        List.of(
                                Tuple2.of(
                                        new FileStateHandle(
                                                new Path("nosuchfs:///dstl/dstl-unreachable"), 100),
                                        0L)),
                        RANGE,
                        100,
                        100,
                        "dfs-batched");
        assertThatThrownBy(() -> Changes.read(view.createReader(), unreachable))
                .hasMessageContaining("dstl-unreachable")
                .hasMessageContaining("nosuchfs");
    }

    @Test
    void readerOfTheWritingStorage_readsToo() throws Exception {
        ChangelogStateHandleStreamImpl handle = writeHandle(true);
        assertThat(Changes.read(storage.createReader(), handle))
                .containsExactly("1:v1", "2:v2", "3:v3");
    }

    @Test
    void viewWithoutCache_readsInPlace() throws Exception {
        ChangelogStateHandleStreamImpl handle = writeHandle(true);
        Configuration config = new Configuration();
        config.set(DfsChangelogOptions.DOWNLOAD_CACHE_ENABLED, false);
        try (DfsChangelogStorageView plain =
                new DfsBatchedChangelogStorageFactory().createStorageView(config)) {
            assertThat(Changes.read(plain.createReader(), handle))
                    .containsExactly("1:v1", "2:v2", "3:v3");
            assertThat(plain.cachedFiles()).isZero();
        }
    }

    // ---- finding 5 of issue 13; failed before its fix -------------------------------------

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"truncated", "deleted", "corrupt"})
    void damagedLocalCopy_isEvictedAndDownloadedAgain(String damage) throws Exception {
        ChangelogStateHandleStreamImpl handle = writeHandle(true);
        assertThat(Changes.read(view.createReader(), handle))
                .containsExactly("1:v1", "2:v2", "3:v3");
        List<File> copies = cachedCopies();
        assertThat(copies).hasSize(3);
        for (File copy : copies) {
            switch (damage) {
                case "truncated":
                    try (RandomAccessFile raf = new RandomAccessFile(copy, "rw")) {
                        raf.setLength(raf.length() - 3);
                    }
                    break;
                case "deleted":
                    assertThat(copy.delete()).isTrue();
                    break;
                default:
                    try (RandomAccessFile raf = new RandomAccessFile(copy, "rw")) {
                        raf.seek(raf.length() - 1);
                        int b = raf.read();
                        raf.seek(raf.length() - 1);
                        raf.write(b ^ 0xFF);
                    }
            }
        }
        assertThat(Changes.read(view.createReader(), handle))
                .containsExactly("1:v1", "2:v2", "3:v3");
        assertThat(opens()).isEqualTo(6);
    }

    /**
     * A restore cancelled by Flink (its thread interrupted) fails as interrupted and leaves the
     * verified local copies alone. Found in a review: the interrupt closed the copy's channel, the
     * reader took that for a damaged copy, deleted it (other tasks restoring from the same file
     * lost it mid-read) and started a download of the whole file for a task that was going away.
     */
    @Test
    void aCancelledRestore_keepsTheCachedCopies_andDownloadsNothing() throws Exception {
        ChangelogStateHandleStreamImpl handle = writeHandle(true);
        assertThat(Changes.read(view.createReader(), handle))
                .containsExactly("1:v1", "2:v2", "3:v3");
        List<File> copies = cachedCopies();
        assertThat(copies).hasSize(3);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread cancelled =
                new Thread(
                        () -> {
                            Thread.currentThread().interrupt();
                            try {
                                Changes.read(view.createReader(), handle);
                            } catch (Throwable t) {
                                failure.set(t);
                            }
                        });
        cancelled.start();
        cancelled.join();
        assertThat(ExceptionUtils.findThrowable(failure.get(), InterruptedIOException.class))
                .as("%s", failure.get())
                .isPresent();
        for (File copy : copies) {
            assertThat(copy).as("a verified local copy").exists();
        }
        assertThat(opens()).as("downloads of the three files").isEqualTo(3);
        assertThat(Changes.read(view.createReader(), handle))
                .containsExactly("1:v1", "2:v2", "3:v3");
        assertThat(opens()).isEqualTo(3);
    }

    /**
     * Copies not read for the idle timeout are deleted without waiting for another restore. Found
     * in a review: they were swept only when the cache was next used, so a restore's copies (the
     * log since the last materialization, possibly gigabytes) stayed in the TaskManager's temp
     * directory for as long as the job ran there without another restore.
     */
    @Test
    void idleCopies_areDeletedWithoutAnotherRestore() throws Exception {
        ChangelogStateHandleStreamImpl handle = writeHandle(true);
        reopenView(DfsChangelogOptions.DOWNLOAD_CACHE_IDLE_TIMEOUT, Duration.ofMillis(100));
        assertThat(Changes.read(view.createReader(), handle))
                .containsExactly("1:v1", "2:v2", "3:v3");
        Waits.until(
                "the idle copies are deleted",
                Duration.ofSeconds(30),
                () -> cachedCopies().isEmpty());
        assertThat(view.cachedFiles()).isZero();
    }

    // ---- a hanging file system during restore ----------------------------------------------

    /**
     * A download from a file system that stops answering fails the restore once no byte arrived for
     * the stall timeout, naming the file and the option, instead of hanging the restoring task
     * (before: it waited as long as the file system did). The abandoned download is forgotten: the
     * next restore downloads again and succeeds, and the abandoned download leaves no copy behind.
     */
    @Test
    void hangingDownload_failsAfterTheStallTimeout_namingTheFileAndTheOption() throws Exception {
        ChangelogStateHandleStreamImpl handle = writeHandle(true);
        reopenView(DfsChangelogOptions.DOWNLOAD_STALL_TIMEOUT, Duration.ofSeconds(2));
        FS.hangLimit(Duration.ofSeconds(30));
        String firstFile =
                ((FileStateHandle) handle.getHandlesAndOffsets().get(0).f0).getFilePath().getName();
        try (Hang hang = FS.hang(FsOp.READ, ".*/" + Pattern.quote(firstFile))) {
            CloseableIterator<StateChange> changes = view.createReader().getChanges(handle);
            Waits.until(
                    "the download reads the hanging file",
                    Duration.ofSeconds(30),
                    () -> hang.blockedCalls() > 0);
            assertThatThrownBy(changes::hasNext)
                    .hasMessageContaining(firstFile)
                    .hasMessageContaining(DfsChangelogOptions.DOWNLOAD_STALL_TIMEOUT.key());
            changes.close();
        }
        assertThat(Changes.read(view.createReader(), handle))
                .containsExactly("1:v1", "2:v2", "3:v3");
        Waits.until(
                "the abandoned download leaves no copy",
                Duration.ofSeconds(30),
                () -> cachedCopies().size() == 3);
    }

    /** The local copies in this test's download cache directory. */
    private List<File> cachedCopies() {
        List<File> copies = new ArrayList<>();
        collectCachedCopies(new File(tmp, "cache"), copies);
        return copies;
    }

    private static void collectCachedCopies(File dir, List<File> out) {
        File[] children = dir.listFiles();
        if (children == null) {
            return;
        }
        for (File child : children) {
            if (child.isDirectory()) {
                collectCachedCopies(child, out);
            } else if (child.getName().startsWith("dstl-")) {
                out.add(child);
            }
        }
    }
}
