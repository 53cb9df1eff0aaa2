package io.github.flinkstate.cluster.scenario;

import io.github.flinkstate.cluster.harness.FlinkCluster;
import io.github.flinkstate.cluster.harness.HdfsListing;
import io.github.flinkstate.cluster.harness.JobSubmitter;
import io.github.flinkstate.cluster.harness.LeftoverFiles;
import io.github.flinkstate.cluster.harness.RestApi.CheckpointCounts;
import io.github.flinkstate.cluster.job.JobInput;
import io.github.flinkstate.cluster.report.ScenarioReport;
import io.github.flinkstate.testing.wait.Waits;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.JobID;
import org.apache.hadoop.fs.FileSystem;

/**
 * One scenario run on the shared cluster: its own HDFS directory ({@code /scenarios/<name>} with
 * {@code checkpoints/}, {@code savepoints/}, {@code results/}, {@code primary/}), the jobs it
 * submitted (cancelled at {@link #close} if still running, so a failed scenario does not hold
 * slots), the job configuration common to all its jobs, and the waits it needs, each with a
 * deadline.
 *
 * <p>Not thread-safe: one test thread.
 */
final class Scenario implements AutoCloseable {

    /** Deadline of every wait for a job to make progress. */
    static final Duration PROGRESS_TIMEOUT = Duration.ofSeconds(90);

    static final String CLAIM = "CLAIM";
    static final String NO_CLAIM = "NO_CLAIM";

    private final FlinkCluster cluster;
    private final JobSubmitter submitter;
    private final FileSystem fs;
    private final String dirUri;
    private final String dirPath;
    private final ScenarioReport report;
    private final List<JobID> jobs = new ArrayList<>();
    private final List<long[]> kills = new ArrayList<>();
    private final List<long[]> cancels = new ArrayList<>();
    private final List<long[]> finishes = new ArrayList<>();
    private final Map<JobID, String> claimedRestores = new java.util.HashMap<>();
    private final List<String> claimedThenCancelled = new ArrayList<>();
    private final long startNanos = System.nanoTime();

    Scenario(
            FlinkCluster cluster,
            JobSubmitter submitter,
            FileSystem fs,
            String hdfsUri,
            String name,
            ScenarioReport report) {
        this.cluster = cluster;
        this.submitter = submitter;
        this.fs = fs;
        this.dirPath = "/scenarios/" + name;
        this.dirUri = hdfsUri + dirPath;
        this.report = report;
    }

    ScenarioReport report() {
        return report;
    }

    FlinkCluster cluster() {
        return cluster;
    }

    /**
     * Submits the job on {@code backend} at {@code parallelism}, its source throttled by 1 ms every
     * {@code throttleEvery} records per subtask; restores from {@code restorePath} (a checkpoint or
     * savepoint) in {@code claimMode} if given.
     */
    JobID submit(
            Backend backend,
            int parallelism,
            JobInput input,
            int throttleEvery,
            String restorePath,
            String claimMode)
            throws Exception {
        Map<String, String> conf = new java.util.LinkedHashMap<>(backend.jobConfig(dirUri));
        conf.put("execution.checkpointing.interval", "1s");
        conf.put("execution.checkpointing.dir", dirUri + "/checkpoints");
        conf.put("execution.checkpointing.savepoint-dir", dirUri + "/savepoints");
        conf.put(
                "execution.checkpointing.externalized-checkpoint-retention",
                "RETAIN_ON_CANCELLATION");
        conf.put("pipeline.max-parallelism", "128");
        if (restorePath != null) {
            conf.put("execution.state-recovery.path", restorePath);
            conf.put("execution.state-recovery.claim-mode", claimMode);
        }
        List<String> args =
                List.of(
                        "--records", Long.toString(input.records()),
                        "--keys", Integer.toString(input.keys()),
                        "--block", Long.toString(input.block()),
                        "--throttle-every", Integer.toString(throttleEvery),
                        "--results", dirUri + "/results",
                        "--name", dirPath.substring(dirPath.lastIndexOf('/') + 1));
        JobID job = submitter.submit(conf, parallelism, args);
        jobs.add(job);
        if (restorePath != null && CLAIM.equals(claimMode)) {
            claimedRestores.put(job, java.net.URI.create(restorePath).getPath());
        }
        return job;
    }

    JobSubmitter submitter() {
        return submitter;
    }

    /** The scenario's directory as a path component ({@code /scenarios/<name>}). */
    String dirPath() {
        return dirPath;
    }

    /** Waits until the job has at least {@code n} completed checkpoints of its own. */
    CheckpointCounts awaitCheckpoints(JobID job, long n) throws Exception {
        CheckpointCounts[] last = new CheckpointCounts[1];
        until(
                "job " + job + " completed " + n + " checkpoints",
                () -> {
                    last[0] = cluster.rest().checkpoints(job);
                    if (last[0].completed() >= n) {
                        return true;
                    }
                    String status = cluster.rest().jobStatus(job);
                    if (List.of("FINISHED", "CANCELED", "FAILED").contains(status)) {
                        throw new IllegalStateException(
                                "job "
                                        + job
                                        + " ended "
                                        + status
                                        + " before "
                                        + n
                                        + " completed checkpoints (input too small for the pace?)");
                    }
                    return false;
                });
        return last[0];
    }

    /** Waits until every task of the job runs. */
    void awaitRunning(JobID job) throws Exception {
        until("all tasks of " + job + " running", () -> cluster.rest().allTasksRunning(job));
    }

    /**
     * Cancels the job just after its next checkpoint completed and returns the path of its retained
     * latest checkpoint.
     */
    String cancelRetaining(JobID job) throws Exception {
        // cancel right after a checkpoint completed; the next one (1 s interval) may already be
        // in flight, and what it registered stays (LeftoverCauses.CANCELLED_IN_FLIGHT)
        long completed = cluster.rest().checkpoints(job).completed();
        awaitCheckpoints(job, completed + 1);
        long seen = System.currentTimeMillis();
        submitter.cancel(job);
        String status = submitter.awaitTermination(job, PROGRESS_TIMEOUT);
        long terminated = System.currentTimeMillis();
        if (!"CANCELED".equals(status)) {
            throw new IllegalStateException("job " + job + " ended " + status + ", not CANCELED");
        }
        // a file the aborted checkpoint registered was written after the retained one was taken:
        // the window starts at the retained checkpoint's trigger, not when the harness saw it
        long retainedTriggered = cluster.rest().checkpoints(job).latestTriggeredAt();
        cancels.add(new long[] {retainedTriggered > 0 ? retainedTriggered : seen, terminated});
        if (claimedRestores.containsKey(job)) {
            claimedThenCancelled.add(claimedRestores.get(job));
        }
        // the newest chk-N with metadata on HDFS: what the cancelled job retained
        String jobDir = dirPath + "/checkpoints/" + job;
        return HdfsListing.completedCheckpointDirs(fs, jobDir).stream()
                .max(
                        java.util.Comparator.comparingLong(
                                d -> Long.parseLong(d.substring(d.lastIndexOf("chk-") + 4))))
                .map(d -> dirUri.substring(0, dirUri.length() - dirPath.length()) + d)
                .orElseThrow(() -> new IllegalStateException("no retained checkpoint of " + job));
    }

    /** Reports a job's line with its restarts and completed checkpoints. */
    void reportJob(JobID job, String line) throws Exception {
        CheckpointCounts cp = cluster.rest().checkpoints(job);
        long restarts = cluster.rest().restarts(job);
        report.job(
                line
                        + ": "
                        + cluster.rest().jobStatus(job)
                        + ", "
                        + restarts
                        + " restarts, "
                        + cp.completed()
                        + " completed / "
                        + cp.failed()
                        + " failed checkpoints ("
                        + job
                        + ")",
                restarts,
                cp.completed());
    }

    /** Waits for the job to finish and requires success. */
    void awaitFinished(JobID job) throws Exception {
        String status = submitter.awaitTermination(job, Duration.ofMinutes(3));
        long terminated = System.currentTimeMillis();
        if (!"FINISHED".equals(status)) {
            throw new IllegalStateException(
                    "job " + job + " ended " + status + ": " + cluster.rest().exceptions(job));
        }
        CheckpointCounts cp = cluster.rest().checkpoints(job);
        if (cp.latestFailedId() > cp.latestId() && cp.latestTriggeredAt() > 0) {
            // its last checkpoint failed as it finished (LeftoverCauses.FINISHED_IN_FLIGHT)
            finishes.add(new long[] {cp.latestTriggeredAt(), terminated});
        }
    }

    ClusterResults.Verdict verdict(JobInput input) throws Exception {
        ClusterResults.Verdict v = ClusterResults.check(fs, dirPath + "/results", input);
        report.verdict(v.summary());
        return v;
    }

    /**
     * Lists the scenario's checkpoint, savepoint, primary and DSTL directories and compares them
     * with {@code retained} (checkpoint/savepoint directories meant to stay).
     */
    /** Records a {@code kill -9} now, for {@link LeftoverCauses}. */
    void killed() {
        long now = System.currentTimeMillis();
        kills.add(new long[] {now, now});
    }

    /** Records that the job runs again after the last {@link #killed()}. */
    void recovered() {
        kills.get(kills.size() - 1)[1] = System.currentTimeMillis();
    }

    /**
     * Lists leftovers (see {@link #leftovers}), reports them by {@link LeftoverCauses cause} and
     * returns the unexplained ones.
     */
    List<String> unexplainedLeftovers(List<String> retained, boolean changelog) throws Exception {
        LeftoverFiles.Result r = leftovers(retained);
        Map<String, List<String>> byCause =
                LeftoverCauses.classify(
                        r.leftovers(), kills, cancels, changelog, claimedThenCancelled, finishes);
        StringBuilder b = new StringBuilder();
        b.append(r.leftovers().size()).append(" of ").append(r.files()).append(" files");
        byCause.forEach(
                (cause, files) -> b.append("; ").append(files.size()).append(' ').append(cause));
        List<String> unexplained = byCause.getOrDefault(LeftoverCauses.UNEXPLAINED, List.of());
        if (!unexplained.isEmpty()) {
            b.append(": ");
            for (String f : unexplained.subList(0, Math.min(5, unexplained.size()))) {
                b.append(f).append(" (written ").append(r.leftovers().get(f)).append(") ");
            }
            b.append("kills ");
            kills.forEach(k -> b.append(java.util.Arrays.toString(k)));
            b.append(" cancels ");
            cancels.forEach(c -> b.append(java.util.Arrays.toString(c)));
        }
        report.leftovers(b.toString());
        byCause.forEach((cause, files) -> report.note("leftover (" + cause + "): " + files));
        return unexplained;
    }

    LeftoverFiles.Result leftovers(List<String> retained) throws Exception {
        List<String> roots =
                new ArrayList<>(
                        List.of(
                                dirPath + "/checkpoints",
                                dirPath + "/savepoints",
                                dirPath + "/primary"));
        for (JobID job : jobs) {
            roots.add("/dstl/" + job);
        }
        LeftoverFiles.Result r = LeftoverFiles.await(fs, roots, retained, Duration.ofSeconds(20));
        report.leftovers(
                r.leftovers().size()
                        + " of "
                        + r.files()
                        + " files"
                        + (r.leftovers().isEmpty()
                                ? ""
                                : " " + r.paths().subList(0, Math.min(5, r.paths().size()))));
        return r;
    }

    long elapsedSeconds() {
        return (System.nanoTime() - startNanos) / 1_000_000_000L;
    }

    double elapsedSecondsExact() {
        return (System.nanoTime() - startNanos) / 1e9;
    }

    void until(String what, java.util.concurrent.Callable<Boolean> condition) throws Exception {
        Waits.untilChecked(
                what,
                PROGRESS_TIMEOUT,
                () -> {
                    cluster.checkAlive();
                    return condition.call();
                });
    }

    /** Cancels jobs of this scenario that still run (a failed scenario must not hold slots). */
    @Override
    public void close() {
        for (JobID job : jobs) {
            try {
                String status = cluster.rest().jobStatus(job);
                if (!List.of("FINISHED", "CANCELED", "FAILED").contains(status)) {
                    submitter.cancel(job);
                    submitter.awaitTermination(job, Duration.ofSeconds(60));
                }
            } catch (Exception e) {
                report.note("could not cancel " + job + ": " + e);
            }
        }
    }
}
