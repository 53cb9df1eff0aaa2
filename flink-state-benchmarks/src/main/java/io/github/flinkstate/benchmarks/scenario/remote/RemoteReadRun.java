package io.github.flinkstate.benchmarks.scenario.remote;

import io.github.flinkstate.benchmarks.common.KeyDraws;
import io.github.flinkstate.testing.fs.FsOp;
import io.github.flinkstate.testing.fs.InjectingFileSystem;
import io.github.flinkstate.testing.fs.Latency;
import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.flink.api.common.JobID;
import org.apache.flink.runtime.state.KeyedStateHandle;

/**
 * One run of the remote read scenario for one backend configuration: load a value state into a
 * fresh backend whose checkpoint directory (and, for the disaggregated backends, primary directory)
 * is on the test kit's {@code inject://} file system with no latency, optionally run gets on it
 * (the settings' {@code getsBeforeCheckpoint}: a job that ran a while), take an incremental
 * checkpoint, dispose the backend, then switch the remote latency and bandwidth on and restore a
 * new backend from the checkpoint (CLAIM mode, cold local directories) and run gets on random keys
 * on one thread (a task's thread) for the settings' duration, counting completed gets and the
 * primary file system's read calls (the job's misses and any background warm-up) per bucket from
 * the restore's start. Every get is checked: its value must hold its key.
 *
 * <p>Not thread-safe; one run at a time (the {@code inject://} file system is JVM-wide).
 */
public final class RemoteReadRun {

    private final RemoteReadSettings settings;

    public RemoteReadRun(RemoteReadSettings settings) {
        this.settings = settings;
    }

    /** Runs {@code target} once in the empty directory {@code dir}. */
    public RemoteReadResult run(RemoteReadTarget target, int round, File dir) throws Exception {
        InjectingFileSystem fs = InjectingFileSystem.shared();
        fs.reset();
        fs.distributed(true);
        String checkpointDir = fs.uri(new File(dir, "checkpoints"));
        JobID jobId = new JobID();
        long nominalBytes = (long) settings.keyCount() * (settings.valueBytes() + 16);

        KeyedStateHandle handle;
        try (TaskBackend loader =
                open(
                        target,
                        nominalBytes,
                        new File(dir, "local-load"),
                        jobId,
                        checkpointDir,
                        null)) {
            byte[] value = new byte[settings.valueBytes()];
            SplittableRandom random = new SplittableRandom(settings.seed());
            for (int k = 0; k < settings.keyCount(); k++) {
                for (int b = 8; b < value.length; b++) {
                    value[b] = (byte) random.nextInt(256);
                }
                writeKey(value, k);
                loader.put(k, value);
            }
            KeyDraws before = KeyDraws.of(settings.keys(), settings.keyCount());
            SplittableRandom beforeRandom = new SplittableRandom(~settings.seed());
            for (int i = 0; i < settings.getsBeforeCheckpoint(); i++) {
                int k = before.next(beforeRandom);
                byte[] v = loader.get(k);
                checkValue(target, k, v, " before the checkpoint");
            }
            handle = loader.checkpoint(1);
        }
        long stateBytes = handle.getStateSize();

        fs.latency(FsOp.READ, Latency.fixed(Duration.ofMillis(settings.readLatencyMs())));
        fs.latency(FsOp.OPEN, Latency.fixed(Duration.ofMillis(settings.readLatencyMs())));
        fs.latency(FsOp.STATUS, Latency.fixed(Duration.ofMillis(settings.readLatencyMs())));
        fs.bandwidth(settings.bandwidthMBps() * 1_000_000L);
        fs.counters().reset();

        KeyDraws draws = KeyDraws.of(settings.keys(), settings.keyCount());
        SplittableRandom random = new SplittableRandom(settings.seed() + round);
        long bucketNanos = settings.bucketMillis() * 1_000_000L;
        long[] gets = new long[settings.buckets()];
        long[] readsAtBucketEnd = new long[settings.buckets()];
        int lastBucket = 0;
        long t0 = System.nanoTime();
        long restoreNanos;
        long firstGetNanos = -1;
        long primaryReads;
        long primaryReadBytes;
        try (TaskBackend restored =
                open(
                        target,
                        stateBytes,
                        new File(dir, "local-restored"),
                        jobId,
                        checkpointDir,
                        List.of(handle))) {
            restoreNanos = System.nanoTime() - t0;
            while (true) {
                int k = draws.next(random);
                byte[] v = restored.get(k);
                long now = System.nanoTime() - t0;
                checkValue(target, k, v, "");
                if (firstGetNanos < 0) {
                    firstGetNanos = now;
                }
                int bucket = (int) (now / bucketNanos);
                while (lastBucket < bucket && lastBucket < gets.length) {
                    readsAtBucketEnd[lastBucket++] = fs.counters().calls(FsOp.READ);
                }
                if (bucket >= gets.length) {
                    break;
                }
                gets[bucket]++;
            }
            primaryReads = fs.counters().calls(FsOp.READ);
            primaryReadBytes = fs.counters().bytes(FsOp.READ);
        } finally {
            fs.reset();
        }
        List<Long> bucketGets = new ArrayList<>(gets.length);
        List<Long> bucketPrimaryReads = new ArrayList<>(gets.length);
        for (int i = 0; i < gets.length; i++) {
            bucketGets.add(gets[i]);
            bucketPrimaryReads.add(readsAtBucketEnd[i] - (i == 0 ? 0 : readsAtBucketEnd[i - 1]));
        }
        return new RemoteReadResult(
                target.label(),
                target.backend(),
                target.cachePercent(),
                settings.keys(),
                round,
                stateBytes,
                restoreNanos / 1_000_000,
                firstGetNanos / 1_000_000,
                settings.bucketMillis(),
                bucketGets,
                bucketPrimaryReads,
                primaryReads,
                primaryReadBytes);
    }

    /** The backend of {@code target}, its cache budget a share of {@code stateBytes}. */
    private TaskBackend open(
            RemoteReadTarget target,
            long stateBytes,
            File localDir,
            JobID jobId,
            String checkpointDir,
            List<KeyedStateHandle> handles)
            throws Exception {
        return TaskBackend.open(
                target.configuration(stateBytes, localDir, settings.managedMemoryBytes()),
                jobId,
                checkpointDir,
                settings.managedMemoryBytes(),
                handles);
    }

    private static void writeKey(byte[] value, long key) {
        for (int i = 0; i < 8; i++) {
            value[i] = (byte) (key >>> (56 - 8 * i));
        }
    }

    private static long readKey(byte[] value) {
        if (value.length < 8) {
            return -1;
        }
        long key = 0;
        for (int i = 0; i < 8; i++) {
            key = (key << 8) | (value[i] & 0xFF);
        }
        return key;
    }

    /** Fails unless {@code v} is the value written for {@code key}. */
    private static void checkValue(RemoteReadTarget target, int key, byte[] v, String when) {
        if (v == null || readKey(v) != key) {
            throw new IllegalStateException(
                    target.label()
                            + ": key "
                            + key
                            + " read a wrong value"
                            + when
                            + ": "
                            + describe(v));
        }
    }

    private static String describe(byte[] v) {
        return v == null ? "null" : v.length + " bytes starting with key " + readKey(v);
    }
}
