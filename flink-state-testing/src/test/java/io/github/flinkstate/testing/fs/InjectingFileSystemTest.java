package io.github.flinkstate.testing.fs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.testing.wait.Waits;
import java.io.File;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystem.WriteMode;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Each behaviour of {@link InjectingFileSystem} and its counters, over the local disk. */
@Timeout(60)
class InjectingFileSystemTest {

    @TempDir File tmp;

    private final InjectingFileSystem fs = new InjectingFileSystem(FileSystem.getLocalFileSystem());
    private final ExecutorService executor = Executors.newSingleThreadExecutor();

    @AfterEach
    void tearDown() throws Exception {
        fs.heal();
        executor.shutdownNow();
        executor.awaitTermination(10, TimeUnit.SECONDS);
        InjectingFileSystem.shared().reset();
    }

    private Path file(String name) {
        return new Path(new File(tmp, name).toURI());
    }

    private static void write(FileSystem fs, Path p, String content) throws IOException {
        try (FSDataOutputStream out = fs.create(p, WriteMode.OVERWRITE)) {
            out.write(content.getBytes(StandardCharsets.UTF_8));
        }
    }

    /** Writes on the executor thread, so that the test thread can watch a hang. */
    private CompletableFuture<Void> writeAsync(Path p, String content) {
        return CompletableFuture.runAsync(
                () -> {
                    try {
                        write(fs, p, content);
                    } catch (IOException e) {
                        throw new RuntimeException(e);
                    }
                },
                executor);
    }

    private static String read(FileSystem fs, Path p) throws IOException {
        try (FSDataInputStream in = fs.open(p)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void passThrough_countsCallsAndBytesPerOperationAndPath() throws Exception {
        Path a = file("a");
        Path b = file("b");
        write(fs, a, "hello");
        write(fs, b, "hi");
        assertThat(read(fs, a)).isEqualTo("hello");
        assertThat(fs.exists(a)).isTrue();
        assertThat(fs.listStatus(new Path(tmp.toURI()))).hasSize(2);
        assertThat(fs.rename(b, file("c"))).isTrue();
        assertThat(fs.delete(file("c"), false)).isTrue();

        FsCounters c = fs.counters();
        assertThat(c.calls(FsOp.CREATE)).isEqualTo(2);
        assertThat(c.calls(FsOp.CLOSE)).isEqualTo(2);
        assertThat(c.bytes(FsOp.WRITE)).isEqualTo(7);
        assertThat(c.calls(FsOp.OPEN)).isEqualTo(1);
        assertThat(c.bytes(FsOp.READ)).isEqualTo(5);
        assertThat(c.calls(FsOp.STATUS)).isEqualTo(1);
        assertThat(c.calls(FsOp.LIST)).isEqualTo(1);
        assertThat(c.calls(FsOp.RENAME)).isEqualTo(1);
        assertThat(c.calls(FsOp.DELETE)).isEqualTo(1);
        String ka = InjectingFileSystem.key(a);
        assertThat(c.bytes(FsOp.WRITE, ka)).isEqualTo(5);
        assertThat(c.calls(FsOp.CREATE, ka)).isEqualTo(1);
        assertThat(c.callsUnder(FsOp.CREATE, InjectingFileSystem.key(tmp))).isEqualTo(2);
        assertThat(c.bytesUnder(FsOp.WRITE, InjectingFileSystem.key(tmp))).isEqualTo(7);
        assertThat(c.paths(FsOp.DELETE)).containsExactly(InjectingFileSystem.key(file("c")));

        c.reset();
        assertThat(c.calls(FsOp.CREATE)).isZero();
        assertThat(c.bytes(FsOp.WRITE, ka)).isZero();
    }

    @Test
    void readLatency_isPaidPerRoundTrip_notForAReadContinuingThePreviousOne() throws Exception {
        Path a = file("a");
        write(fs, a, "0123456789abcdefghij");
        Latency everyRoundTrip = Latency.fixed(Duration.ZERO).withTail(1.0, Duration.ofMillis(1));
        fs.latency(FsOp.READ, everyRoundTrip);
        try (FSDataInputStream in = fs.open(a)) {
            in.read(new byte[4], 0, 4); // first read: a round trip
            in.read(); // continues at 4
            in.read(new byte[3], 0, 3); // continues at 5
            assertThat(everyRoundTrip.tailSamples()).isEqualTo(1);
            in.seek(8); // where the previous read ended: still one transfer
            in.read();
            assertThat(everyRoundTrip.tailSamples()).isEqualTo(1);
            in.seek(2); // elsewhere: a new round trip
            in.read();
            assertThat(everyRoundTrip.tailSamples()).isEqualTo(2);
            ((org.apache.flink.core.fs.ByteBufferReadable) in)
                    .read(15, java.nio.ByteBuffer.allocate(2)); // positional: always one
            assertThat(everyRoundTrip.tailSamples()).isEqualTo(3);
            in.read(); // the stream's own transfer continues at 3, untouched by the positional read
            assertThat(everyRoundTrip.tailSamples()).isEqualTo(3);
        }
        assertThat(fs.counters().calls(FsOp.READ)).as("every call is counted").isEqualTo(7);
    }

    @Test
    void byteBufferReads_fillTheBufferInOneRoundTrip_positionalOnesKeepThePosition()
            throws Exception {
        Path a = file("a");
        write(fs, a, "0123456789abcdefghij");
        fs.flipByte(a, 12);
        try (FSDataInputStream in = fs.open(a)) {
            assertThat(in).isInstanceOf(org.apache.flink.core.fs.ByteBufferReadable.class);
            org.apache.flink.core.fs.ByteBufferReadable pread =
                    (org.apache.flink.core.fs.ByteBufferReadable) in;
            fs.counters().reset();
            in.seek(3);
            java.nio.ByteBuffer at10 = java.nio.ByteBuffer.allocate(5);
            assertThat(pread.read(10, at10)).isEqualTo(5);
            assertThat(new String(at10.array(), 0, 2, StandardCharsets.UTF_8)).isEqualTo("ab");
            assertThat(at10.get(2)).isEqualTo((byte) ('c' ^ 0x5A)); // the flipped byte
            assertThat(in.getPos()).isEqualTo(3);
            assertThat(fs.counters().calls(FsOp.READ)).isEqualTo(1);

            java.nio.ByteBuffer rest = java.nio.ByteBuffer.allocate(40);
            assertThat(pread.read(rest)).isEqualTo(17); // up to the end of the file
            assertThat(pread.read(java.nio.ByteBuffer.allocate(1))).isEqualTo(-1);
            assertThat(fs.counters().calls(FsOp.READ)).isEqualTo(3);
            assertThat(fs.counters().bytes(FsOp.READ)).isEqualTo(22);
        }
        fs.heal();
        fs.truncate(a, 8);
        try (FSDataInputStream in = fs.open(a)) {
            java.nio.ByteBuffer all = java.nio.ByteBuffer.allocate(20);
            assertThat(((org.apache.flink.core.fs.ByteBufferReadable) in).read(0, all))
                    .isEqualTo(8);
        }
    }

    @Test
    void latency_isSampledPerCallOfItsOperation() throws Exception {
        Latency everyCallIsTail = Latency.fixed(Duration.ZERO).withTail(1.0, Duration.ofMillis(1));
        fs.latency(FsOp.CLOSE, everyCallIsTail);
        write(fs, file("a"), "x");
        write(fs, file("b"), "y");
        read(fs, file("a"));
        assertThat(everyCallIsTail.tailSamples()).isEqualTo(2);
        assertThat(fs.latency(FsOp.OPEN).sampleNanos(new java.util.Random(1))).isZero();
    }

    @Test
    void latencyDistribution_hasItsMedianAndTail_seeded() {
        Latency l =
                Latency.logNormal(Duration.ofMillis(5), 0.5).withTail(0.01, Duration.ofSeconds(1));
        java.util.Random random = new java.util.Random(7);
        long[] samples = new long[100_000];
        for (int i = 0; i < samples.length; i++) {
            samples[i] = l.sampleNanos(random);
        }
        Arrays.sort(samples);
        long median = samples[samples.length / 2];
        assertThat(median).isBetween(4_800_000L, 5_200_000L);
        assertThat(l.tailSamples()).isBetween(800L, 1200L);
        assertThat(samples[samples.length - 1]).isEqualTo(1_000_000_000L);
        assertThat(Latency.fixed(Duration.ofMillis(3)).sampleNanos(random)).isEqualTo(3_000_000L);
    }

    @Test
    void bandwidth_reservesTransfersOnOneTimeline() {
        BandwidthLimiter limiter = new BandwidthLimiter(1000); // 1000 bytes per second
        assertThat(limiter.reserve(500, 0)).isEqualTo(500_000_000L);
        assertThat(limiter.reserve(1000, 0)).isEqualTo(1_500_000_000L); // queued behind the first
        assertThat(limiter.reserve(100, 5_000_000_000L)).isEqualTo(5_100_000_000L); // idle link
    }

    @Test
    void bandwidth_aTransferArrivingSlightlyLate_losesNoLinkTime() {
        // A writer's sleep overshoots its reservation by tens of microseconds (parkNanos); a DFS
        // client's buffer keeps the link busy meanwhile, so the next transfer starts where the
        // previous one ended. 10,000 writes of 2,000 bytes at 100 MB/s, each woken 60 us late:
        // 0.2 s of link time, not 0.8 s.
        BandwidthLimiter limiter = new BandwidthLimiter(100_000_000);
        long end = 0;
        for (int i = 0; i < 10_000; i++) {
            long wokeAt = end + 60_000;
            end = limiter.reserve(2_000, BandwidthLimiter.Sleeps.readyAt(end, wokeAt));
        }
        assertThat(end).isEqualTo(200_000_000L);
    }

    @Test
    void bandwidth_aTransferAfterALatency_startsWhenTheLatencyEnds() {
        BandwidthLimiter limiter = new BandwidthLimiter(100_000_000); // 100 bytes per us
        long latencyEnd = 5_000_000; // e.g. the 5 ms of an open, woken 60 us late
        long ready = BandwidthLimiter.Sleeps.readyAt(latencyEnd, latencyEnd + 60_000);
        assertThat(ready).isEqualTo(latencyEnd);
        // 100 KB take 1 ms after the latency, none of it inside the latency
        assertThat(limiter.reserve(100_000, ready)).isEqualTo(latencyEnd + 1_000_000);
        // a thread that did other work after its last wait is ready when it asks
        long later = latencyEnd + 5_000_000;
        assertThat(BandwidthLimiter.Sleeps.readyAt(latencyEnd, later)).isEqualTo(later);
        assertThat(limiter.reserve(100_000, later)).isEqualTo(later + 1_000_000);
    }

    @Test
    void bandwidth_capsStreamsWithoutChangingContent() throws Exception {
        fs.bandwidth(1 << 30);
        write(fs, file("a"), "capped");
        assertThat(read(fs, file("a"))).isEqualTo("capped");
        fs.bandwidth(0);
        assertThat(read(fs, file("a"))).isEqualTo("capped");
    }

    @Test
    void failNextCreates_failsThatManyCreates() throws Exception {
        fs.failNextCreates(2);
        assertThatThrownBy(() -> write(fs, file("a"), "x"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("injected");
        assertThatThrownBy(() -> write(fs, file("b"), "x")).isInstanceOf(IOException.class);
        write(fs, file("c"), "x");
        assertThat(fs.counters().calls(FsOp.CREATE)).isEqualTo(3);
    }

    @Test
    void failNthCreate_failsOnlyThatCreate() throws Exception {
        fs.failNthCreate(3);
        write(fs, file("a"), "x");
        write(fs, file("b"), "x");
        assertThatThrownBy(() -> write(fs, file("c"), "x"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("create #3");
        write(fs, file("d"), "x");
    }

    @Test
    void failCreatesMatching_failsEveryMatchingPathUntilHealed() throws Exception {
        fs.failCreatesMatching(".*/dstl-.*");
        write(fs, file("other"), "x");
        assertThatThrownBy(() -> write(fs, file("dstl-1"), "x"))
                .hasMessageContaining("matches .*/dstl-.*");
        assertThatThrownBy(() -> write(fs, file("dstl-2"), "x")).isInstanceOf(IOException.class);
        fs.heal();
        write(fs, file("dstl-3"), "x");
    }

    @Test
    void failNextWrites_failsTheStreamPastTheByteLimit() throws Exception {
        fs.failNextWrites(1, 4);
        FSDataOutputStream out = fs.create(file("a"), WriteMode.OVERWRITE);
        out.write(new byte[3]);
        assertThatThrownBy(() -> out.write(new byte[3]))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("after 3 bytes");
        out.close();
        write(fs, file("b"), "no longer failing");
    }

    @Test
    void hang_blocksUntilReleased() throws Exception {
        Hang hang = fs.hang(FsOp.CREATE, ".*/slow");
        write(fs, file("fast"), "x"); // not matching
        CompletableFuture<Void> blocked = writeAsync(file("slow"), "x");
        Waits.until("the create hangs", Duration.ofSeconds(30), () -> hang.blockedCalls() == 1);
        assertThat(blocked).isNotDone();
        hang.release();
        blocked.get(30, TimeUnit.SECONDS);
        assertThat(hang.totalBlockedCalls()).isEqualTo(1);
        assertThat(read(fs, file("slow"))).isEqualTo("x");
    }

    @Test
    void hangNext_blocksOnlyTheNextMatchingCall() throws Exception {
        Hang hang = fs.hangNext(FsOp.CREATE, ".*");
        CompletableFuture<Void> first = writeAsync(file("first"), "1");
        Waits.until(
                "the first create hangs", Duration.ofSeconds(30), () -> hang.blockedCalls() == 1);
        write(fs, file("second"), "2"); // passes while the first still hangs
        assertThat(first).isNotDone();
        hang.release();
        first.get(30, TimeUnit.SECONDS);
        assertThat(hang.totalBlockedCalls()).isEqualTo(1);
    }

    @Test
    void hang_givesUpAfterTheLimitSoNothingHangsForever() {
        fs.hangLimit(Duration.ofMillis(50));
        fs.hang(FsOp.OPEN, ".*");
        assertThatThrownBy(() -> fs.open(file("any")))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("not released");
    }

    @Test
    void hang_onCloseBlocksTheUpload_andHealReleases() throws Exception {
        Hang hang = fs.hang(FsOp.CLOSE, ".*");
        CompletableFuture<Void> upload = writeAsync(file("upload"), "data");
        Waits.until("the close hangs", Duration.ofSeconds(30), () -> hang.blockedCalls() == 1);
        fs.heal();
        upload.get(30, TimeUnit.SECONDS);
        assertThat(read(fs, file("upload"))).isEqualTo("data");
    }

    @Test
    void truncate_shortensReadsAndStatus() throws Exception {
        Path a = file("a");
        write(fs, a, "0123456789");
        fs.truncate(a, 4);
        assertThat(read(fs, a)).isEqualTo("0123");
        assertThat(fs.getFileStatus(a).getLen()).isEqualTo(4);
        assertThat(fs.listStatus(new Path(tmp.toURI()))[0].getLen()).isEqualTo(4);
        fs.heal();
        assertThat(read(fs, a)).isEqualTo("0123456789");
    }

    /** skip() and available() see the truncated file too, not the bytes behind the cut. */
    @Test
    void truncate_limitsSkipAndAvailable() throws Exception {
        Path a = file("a");
        write(fs, a, "0123456789");
        fs.truncate(a, 4);
        try (FSDataInputStream in = fs.open(a)) {
            assertThat(in.available()).isLessThanOrEqualTo(4);
            assertThat(in.skip(3)).isEqualTo(3);
            assertThat(in.available()).isLessThanOrEqualTo(1);
            assertThat(in.skip(5)).as("only to the cut").isEqualTo(1);
            assertThat(in.available()).isZero();
            assertThat(in.read()).isEqualTo(-1);
        }
    }

    @Test
    void flipByte_corruptsExactlyThatByte() throws Exception {
        Path a = file("a");
        write(fs, a, "aaaa");
        fs.flipByte(a, 2);
        byte[] got = read(fs, a).getBytes(StandardCharsets.ISO_8859_1);
        assertThat(got[0]).isEqualTo((byte) 'a');
        assertThat(got[2]).isEqualTo((byte) ('a' ^ 0x5A));
        try (FSDataInputStream in = fs.open(a)) {
            in.seek(2);
            assertThat(in.read()).isEqualTo('a' ^ 0x5A);
        }
    }

    @Test
    void hide_makesAFileMissing() throws Exception {
        Path a = file("a");
        write(fs, a, "x");
        write(fs, file("b"), "y");
        fs.hide(a);
        assertThatThrownBy(() -> fs.open(a)).isInstanceOf(FileNotFoundException.class);
        assertThat(fs.exists(a)).isFalse();
        FileStatus[] listed = fs.listStatus(new Path(tmp.toURI()));
        assertThat(listed).extracting(s -> s.getPath().getName()).containsExactly("b");
        fs.heal();
        assertThat(fs.exists(a)).isTrue();
    }

    @Test
    void sharedScheme_isResolvedByFlink_andMapsPathsToItsScheme() throws Exception {
        InjectingFileSystem shared = InjectingFileSystem.shared();
        Path p = shared.path(new File(tmp, "via-scheme"));
        assertThat(p.toUri().getScheme()).isEqualTo("inject");
        FileSystem resolved = p.getFileSystem();
        assertThat(resolved).isSameAs(shared);
        write(resolved, p, "abc");
        assertThat(new File(tmp, "via-scheme")).hasContent("abc");
        assertThat(resolved.getFileStatus(p).getPath().toUri().getScheme()).isEqualTo("inject");
        assertThat(resolved.listStatus(shared.path(tmp))[0].getPath().toUri().getScheme())
                .isEqualTo("inject");
        assertThat(shared.counters().bytes(FsOp.WRITE, InjectingFileSystem.key(p))).isEqualTo(3);
        assertThat(resolved.isDistributedFS()).isTrue();
    }

    @Test
    void install_registersAnotherScheme_andKeepsInject() throws Exception {
        InjectingFileSystem other = InjectingFileSystem.install("injecttest");
        other.reset();
        Path p = other.path(new File(tmp, "other"));
        // Flink wraps plugin file systems (class loader fixing); calls still reach ours
        write(p.getFileSystem(), p, "z");
        assertThat(other.counters().calls(FsOp.CREATE)).isEqualTo(1);
        assertThat(new File(tmp, "other")).hasContent("z");
        assertThat(InjectingFileSystem.shared().path(tmp).getFileSystem())
                .isSameAs(InjectingFileSystem.shared());
        assertThat(InjectingFileSystem.install("injecttest")).isSameAs(other);
        other.reset();
    }

    @Test
    void wrapping_hasNoSchemeOfItsOwn() {
        assertThat(fs.getUri()).isEqualTo(FileSystem.getLocalFileSystem().getUri());
        assertThatThrownBy(() -> fs.path(tmp)).isInstanceOf(IllegalStateException.class);
    }
}
