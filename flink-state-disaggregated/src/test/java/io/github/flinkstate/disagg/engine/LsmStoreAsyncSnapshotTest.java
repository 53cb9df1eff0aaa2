package io.github.flinkstate.disagg.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.flinkstate.disagg.engine.cache.BlockCache;
import io.github.flinkstate.disagg.engine.iterator.LsmIterator;
import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import io.github.flinkstate.disagg.engine.testutil.LsmModelRunner;
import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.Hang;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import io.github.flinkstate.testing.fs.Latency;
import java.io.File;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link LsmStore#beginSnapshot()}: the synchronous half of a checkpoint writes nothing, and the
 * snapshot that {@link LsmStore.PendingSnapshot#await()} returns holds exactly the writes made
 * before the begin, however many memtables later writes fill, flush and compact meanwhile.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LsmStoreAsyncSnapshotTest {

    private static final KeyGroupSpan SPAN = KeyGroupSpan.of(0, 3);

    @TempDir File tmp;

    private final InjectingFileSystem fs = new InjectingFileSystem(FileSystem.getLocalFileSystem());
    private int dirs;

    private LsmOptions options(boolean backgroundCompaction) {
        return new LsmOptions(fs, new Path(new Path(tmp.toURI()), "s" + (dirs++)), SPAN)
                .blockSize(512)
                .memtableBytes(16 << 10)
                .backgroundCompaction(backgroundCompaction)
                .blockCache(new BlockCache(1 << 20));
    }

    /** Writes keys {@code 0..n-1} with values naming {@code round}; updates {@code model}. */
    private static void write(LsmStore store, NavigableMap<byte[], byte[]> model, int n, int round)
            throws IOException {
        for (int i = 0; i < n; i++) {
            byte[] k = LsmModelRunner.key(i % 4, 0, i);
            byte[] v = ("round-" + round + "-value-" + i).getBytes();
            store.put(k, v);
            model.put(k, v);
        }
    }

    private static void assertHolds(LsmStore store, NavigableMap<byte[], byte[]> model)
            throws IOException {
        store.checkInvariants();
        int n = 0;
        try (LsmIterator it = store.scanAll()) {
            for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
                assertThat(it.isValid()).as("entry %s present", n).isTrue();
                assertThat(it.key()).isEqualTo(e.getKey());
                assertThat(new String(it.value())).isEqualTo(new String(e.getValue()));
                it.next();
                n++;
            }
            assertThat(it.isValid()).as("no entry beyond the model").isFalse();
        }
    }

    @Test
    void writesAfterTheBegin_areNotInTheSnapshot() throws Exception {
        try (LsmStore store = LsmStore.open(options(true))) {
            NavigableMap<byte[], byte[]> atBarrier = LsmModelRunner.newModel();
            write(store, atBarrier, 3000, 1); // several memtables, some flushed in the background
            LsmStore.PendingSnapshot pending = store.beginSnapshot();
            // later writes overwrite every key, add more, fill, flush and compact memtables
            write(store, LsmModelRunner.newModel(), 6000, 2);
            store.delete(LsmModelRunner.key(0, 0, 0));
            try (LsmSnapshot snap = pending.await()) {
                assertThat(snap.lastSeq()).isEqualTo(pending.seq());
                try (LsmStore restored = LsmStore.open(options(false), List.of(snap.manifest()))) {
                    assertHolds(restored, atBarrier);
                }
            }
        }
    }

    @Test
    void theAwaitEnds_whileAWriterKeepsTheFlushBusy() throws Exception {
        // every file creation takes 20 ms: a steady writer always has frozen memtables waiting
        // (up to 16, and no level-0 stall), so the flush thread is never idle
        fs.latency(FsOp.CREATE, Latency.fixed(Duration.ofMillis(20)));
        LsmOptions busy = options(true).maxImmutableMemtables(16).l0StopWritesTrigger(100_000);
        try (LsmStore store = LsmStore.open(busy)) {
            NavigableMap<byte[], byte[]> atBarrier = LsmModelRunner.newModel();
            write(store, atBarrier, 2000, 1);
            LsmStore.PendingSnapshot pending = store.beginSnapshot();
            AtomicBoolean stop = new AtomicBoolean();
            AtomicReference<Throwable> writerError = new AtomicReference<>();
            Thread writer =
                    new Thread(
                            () -> {
                                try {
                                    for (int round = 2; !stop.get(); round++) {
                                        write(store, LsmModelRunner.newModel(), 2000, round);
                                    }
                                } catch (Throwable t) {
                                    writerError.set(t);
                                }
                            },
                            "steady-writer");
            writer.start();
            try (LsmSnapshot snap = pending.await()) {
                stop.set(true);
                writer.join();
                assertThat(writerError.get()).isNull();
                try (LsmStore restored = LsmStore.open(options(false), List.of(snap.manifest()))) {
                    assertHolds(restored, atBarrier);
                }
            } finally {
                stop.set(true);
                writer.join();
            }
        }
    }

    @Test
    void anInterruptedAwait_failsWithoutFailingAFlush() throws Exception {
        try (LsmStore store = LsmStore.open(options(false))) {
            NavigableMap<byte[], byte[]> model = LsmModelRunner.newModel();
            write(store, model, 60, 1);
            LsmStore.PendingSnapshot pending;
            try (Hang creates = fs.hang(FsOp.CREATE, ".*")) {
                pending = store.beginSnapshot();
                Thread.currentThread().interrupt(); // a cancelled checkpoint
                assertThatThrownBy(pending::await).isInstanceOf(InterruptedIOException.class);
                assertThat(Thread.interrupted()).isTrue();
                pending.close();
            }
            try (LsmSnapshot snap = store.snapshot();
                    LsmStore restored = LsmStore.open(options(false), List.of(snap.manifest()))) {
                assertHolds(restored, model);
            }
            assertThat(store.stats().flushFailures()).isZero();
        }
    }

    @Test
    void theBeginDoesNoIo_theAwaitFlushes() throws Exception {
        try (LsmStore store = LsmStore.open(options(false))) {
            NavigableMap<byte[], byte[]> atBarrier = LsmModelRunner.newModel();
            write(store, atBarrier, 60, 1); // one memtable, not full
            LsmStore.PendingSnapshot pending;
            try (Hang creates = fs.hang(FsOp.CREATE, ".*")) {
                // returns while every file creation hangs: it writes nothing (the background
                // flush it starts waits in the hang)
                pending = store.beginSnapshot();
                assertThat(pending.seq()).isPositive();
            }
            write(store, LsmModelRunner.newModel(), 100, 2);
            try (LsmSnapshot snap = pending.await()) {
                assertThat(snap.files()).hasSize(1);
                try (LsmStore restored = LsmStore.open(options(false), List.of(snap.manifest()))) {
                    assertHolds(restored, atBarrier);
                }
            }
        }
    }

    @Test
    void aFailingFlush_failsTheAwait_andALaterSnapshotHoldsEverything() throws Exception {
        try (LsmStore store = LsmStore.open(options(false))) {
            NavigableMap<byte[], byte[]> model = LsmModelRunner.newModel();
            write(store, model, 60, 1); // one memtable, not full: no flush before the begin
            // the background flush fails; the retry the failed await schedules then succeeds
            // (a second injected failure would race that retry against heal() below)
            fs.failNextCreates(1);
            LsmStore.PendingSnapshot pending = store.beginSnapshot();
            assertThatThrownBy(pending::await).isInstanceOf(IOException.class);
            pending.close();
            fs.heal();
            write(store, model, 50, 2);
            try (LsmSnapshot snap = store.snapshot();
                    LsmStore restored = LsmStore.open(options(false), List.of(snap.manifest()))) {
                assertHolds(restored, model);
            }
        }
    }

    @Test
    void aClosedPendingSnapshot_cannotBeAwaited_andPinsNothing() throws Exception {
        try (LsmStore store = LsmStore.open(options(false))) {
            NavigableMap<byte[], byte[]> model = LsmModelRunner.newModel();
            write(store, model, 100, 1);
            LsmStore.PendingSnapshot pending = store.beginSnapshot();
            pending.close();
            pending.close(); // idempotent
            assertThatThrownBy(pending::await).isInstanceOf(IOException.class);
            store.flush();
            store.checkInvariants();
            try (LsmSnapshot snap = store.snapshot();
                    LsmStore restored = LsmStore.open(options(false), List.of(snap.manifest()))) {
                assertHolds(restored, model);
            }
        }
    }
}
