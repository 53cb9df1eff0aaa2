package io.github.flinkstate.cluster.scenario;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** Which leftover files {@link LeftoverCauses} accepts, and that it explains nothing else. */
class LeftoverCausesTest {

    private static final long KILL = 1_000_000;
    private static final long RECOVERED = KILL + 7_000;

    private static List<long[]> kill() {
        return List.<long[]>of(new long[] {KILL, RECOVERED});
    }

    @Test
    void fileWrittenShortlyBeforeAKill_isTheKilledTaskManagers() {
        Map<String, List<String>> c =
                LeftoverCauses.classify(
                        Map.of("/cp/job/shared/a", KILL - 1_000),
                        kill(),
                        List.of(),
                        false,
                        List.of());
        assertThat(c).containsOnlyKeys(LeftoverCauses.KILLED);
    }

    @Test
    void fileWrittenWhileTheJobRecovered_isOfTheAbortedCheckpoint() {
        Map<String, List<String>> c =
                LeftoverCauses.classify(
                        Map.of("/cp/job/shared/a", RECOVERED), kill(), List.of(), false, List.of());
        assertThat(c).containsOnlyKeys(LeftoverCauses.KILLED);
    }

    @Test
    void fileWrittenAfterRecoveryOrLongBeforeAKill_isUnexplained() {
        Map<String, Long> files = new TreeMap<>();
        files.put("/cp/job/shared/after", RECOVERED + 1);
        files.put("/cp/job/shared/long-before", KILL - LeftoverCauses.KILL_WINDOW_MILLIS - 1);
        Map<String, List<String>> c =
                LeftoverCauses.classify(files, kill(), List.of(), false, List.of());
        assertThat(c).containsOnlyKeys(LeftoverCauses.UNEXPLAINED);
        assertThat(c.get(LeftoverCauses.UNEXPLAINED)).hasSize(2);
    }

    @Test
    void taskOwnedFiles_areMaterializationsOnlyUnderTheChangelogBackend() {
        Map<String, Long> files = Map.of("/cp/job/taskowned/m", 5L);
        assertThat(LeftoverCauses.classify(files, List.of(), List.of(), true, List.of()))
                .containsOnlyKeys(LeftoverCauses.MATERIALIZATION);
        assertThat(LeftoverCauses.classify(files, List.of(), List.of(), false, List.of()))
                .containsOnlyKeys(LeftoverCauses.UNEXPLAINED);
    }

    @Test
    void filesOfAClaimedThenCancelledCheckpoint_areFlinks_butNotItsSiblings() {
        Map<String, Long> files = new TreeMap<>();
        files.put("/cp/job/chk-2/_metadata", 5L);
        files.put("/cp/job/chk-20/_metadata", 5L);
        Map<String, List<String>> c =
                LeftoverCauses.classify(
                        files, List.of(), List.of(), true, List.of("/cp/job/chk-2"));
        assertThat(c.get(LeftoverCauses.CLAIMED_THEN_CANCELLED))
                .containsExactly("/cp/job/chk-2/_metadata");
        assertThat(c.get(LeftoverCauses.UNEXPLAINED)).containsExactly("/cp/job/chk-20/_metadata");
    }

    @Test
    void fileWrittenWhileAJobWasCancelled_isOfTheCheckpointInFlight_butNotBeforeOrAfter() {
        long seen = 2_000_000;
        long terminated = seen + 600;
        Map<String, Long> files = new TreeMap<>();
        files.put("/primary/op/in-flight.sst", seen + 100);
        files.put("/primary/op/before.sst", seen - 1);
        // an upload in flight at the cancellation gets its time when it is closed: seen in CI 3-9
        // ms
        // after the job's terminal state (RocksDB shared/ files)
        files.put("/primary/op/closed-just-after.sst", terminated + 9);
        files.put("/primary/op/after.sst", terminated + LeftoverCauses.CANCEL_GRACE_MILLIS + 1);
        Map<String, List<String>> c =
                LeftoverCauses.classify(
                        files,
                        List.of(),
                        List.<long[]>of(new long[] {seen, terminated}),
                        false,
                        List.of());
        assertThat(c.get(LeftoverCauses.CANCELLED_IN_FLIGHT))
                .containsExactlyInAnyOrder(
                        "/primary/op/in-flight.sst", "/primary/op/closed-just-after.sst");
        assertThat(c.get(LeftoverCauses.UNEXPLAINED))
                .containsExactly("/primary/op/after.sst", "/primary/op/before.sst");
    }

    @Test
    void fileWrittenAfterTheLastCompletedCheckpointOfAFinishingJob_isOfItsFailedLastCheckpoint() {
        long lastCompletedTriggered = 2_000_000;
        long finished = lastCompletedTriggered + 1_300;
        Map<String, Long> files = new TreeMap<>();
        files.put("/primary/op/a-000025.sst", lastCompletedTriggered + 500);
        files.put("/primary/op/b-000003.sst", lastCompletedTriggered - 1);
        files.put("/primary/op/c-000030.sst", finished + LeftoverCauses.CANCEL_GRACE_MILLIS + 1);
        Map<String, List<String>> c =
                LeftoverCauses.classify(
                        files,
                        List.of(),
                        List.of(),
                        false,
                        List.of(),
                        List.<long[]>of(new long[] {lastCompletedTriggered, finished}));
        assertThat(c.get(LeftoverCauses.FINISHED_IN_FLIGHT))
                .containsExactly("/primary/op/a-000025.sst");
        assertThat(c.get(LeftoverCauses.UNEXPLAINED))
                .containsExactly("/primary/op/b-000003.sst", "/primary/op/c-000030.sst");

        // a more specific cause wins inside the window
        Map<String, List<String>> changelog =
                LeftoverCauses.classify(
                        Map.of("/cp/job/taskowned/m", lastCompletedTriggered + 500),
                        List.of(),
                        List.of(),
                        true,
                        List.of(),
                        List.<long[]>of(new long[] {lastCompletedTriggered, finished}));
        assertThat(changelog).containsOnlyKeys(LeftoverCauses.MATERIALIZATION);
    }
}
