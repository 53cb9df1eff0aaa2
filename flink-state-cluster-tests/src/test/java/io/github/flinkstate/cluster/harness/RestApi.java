package io.github.flinkstate.cluster.harness;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.flink.api.common.JobID;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

/**
 * Read-only views of the JobManager's REST API (the endpoints the web UI uses) that the scenarios
 * observe: registered TaskManagers and their busy slots, job and task states, checkpoint counts,
 * restarts. Every call has a 10 s timeout. Job submission and control go through Flink's {@code
 * RestClusterClient} ({@link JobClient}).
 *
 * <p>Thread safety: thread-safe.
 */
public final class RestApi {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final String base;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    RestApi(String host, int port) {
        this.base = "http://" + host + ":" + port;
    }

    public JsonNode get(String path) throws IOException {
        HttpRequest request =
                HttpRequest.newBuilder(URI.create(base + path)).timeout(TIMEOUT).GET().build();
        try {
            HttpResponse<String> response =
                    http.send(request, HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                throw new IOException(
                        "GET " + path + ": HTTP " + response.statusCode() + ": " + response.body());
            }
            return JSON.readTree(response.body());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted: GET " + path, e);
        }
    }

    /** Resource ids of the registered TaskManagers; empty while the REST endpoint is not up. */
    public List<String> registeredTaskManagers() {
        try {
            List<String> ids = new ArrayList<>();
            get("/taskmanagers")
                    .path("taskmanagers")
                    .forEach(tm -> ids.add(tm.path("id").asText()));
            return ids;
        } catch (IOException e) {
            return List.of();
        }
    }

    /** Resource ids of TaskManagers with at least one slot in use. */
    public List<String> busyTaskManagers() throws IOException {
        List<String> ids = new ArrayList<>();
        for (JsonNode tm : get("/taskmanagers").path("taskmanagers")) {
            if (tm.path("freeSlots").asInt() < tm.path("slotsNumber").asInt()) {
                ids.add(tm.path("id").asText());
            }
        }
        return ids;
    }

    /** The job's status ({@code RUNNING}, {@code FINISHED}, ...). */
    public String jobStatus(JobID job) throws IOException {
        return get("/jobs/" + job).path("state").asText();
    }

    /** Whether the job is RUNNING and every one of its tasks is RUNNING (or already FINISHED). */
    public boolean allTasksRunning(JobID job) throws IOException {
        JsonNode details = get("/jobs/" + job);
        if (!"RUNNING".equals(details.path("state").asText())) {
            return false;
        }
        for (JsonNode vertex : details.path("vertices")) {
            JsonNode tasks = vertex.path("tasks");
            int parallelism = vertex.path("parallelism").asInt();
            if (tasks.path("RUNNING").asInt() + tasks.path("FINISHED").asInt() != parallelism) {
                return false;
            }
        }
        return true;
    }

    /** Checkpoint counts and the latest completed checkpoint of a job. */
    public CheckpointCounts checkpoints(JobID job) throws IOException {
        JsonNode cp = get("/jobs/" + job + "/checkpoints");
        JsonNode counts = cp.path("counts");
        JsonNode latest = cp.path("latest").path("completed");
        return new CheckpointCounts(
                counts.path("completed").asLong(),
                counts.path("in_progress").asLong(),
                counts.path("failed").asLong(),
                latest.isMissingNode() || latest.isNull() ? -1 : latest.path("id").asLong(),
                latest.isMissingNode() || latest.isNull()
                        ? Optional.empty()
                        : Optional.ofNullable(latest.path("external_path").asText(null)),
                latest.path("trigger_timestamp").asLong(-1),
                cp.path("latest").path("failed").path("id").asLong(-1));
    }

    /**
     * When the job last entered RESTARTING (epoch millis; 0 if it never did), from the execution
     * graph's state timestamps. Unlike {@link #restarts}, which the REST metric fetcher refreshes
     * only every {@code metrics.fetcher.update-interval} (10 s) and drops once the job ends, this
     * is current within the execution graph cache's timeout and still answers for a finished job.
     */
    public long lastRestartMillis(JobID job) throws IOException {
        return get("/jobs/" + job).path("timestamps").path("RESTARTING").asLong(0);
    }

    /**
     * The job's {@code numRestarts} metric, as the REST metric fetcher last saw it (up to 10 s old,
     * and 0 once the job has ended): for reports, not for waiting on a restart.
     */
    public long restarts(JobID job) throws IOException {
        for (JsonNode m : get("/jobs/" + job + "/metrics?get=numRestarts")) {
            return m.path("value").asLong();
        }
        return 0;
    }

    /** Stack traces of the job's failures, newest first (Flink keeps the latest few). */
    public List<String> exceptions(JobID job) throws IOException {
        List<String> traces = new ArrayList<>();
        for (JsonNode e :
                get("/jobs/" + job + "/exceptions").path("exceptionHistory").path("entries")) {
            traces.add(e.path("stacktrace").asText());
        }
        return traces;
    }

    /**
     * Checkpoint counts from {@code /jobs/:id/checkpoints}.
     *
     * @param latestId id of the latest completed checkpoint, -1 if none
     * @param latestPath its external path ({@code hdfs://.../chk-N}), if any
     * @param latestTriggeredAt when it was triggered (ms since the epoch, JobManager clock), -1 if
     *     none
     * @param latestFailedId id of the latest failed checkpoint, -1 if none
     */
    public record CheckpointCounts(
            long completed,
            long inProgress,
            long failed,
            long latestId,
            Optional<String> latestPath,
            long latestTriggeredAt,
            long latestFailedId) {}
}
