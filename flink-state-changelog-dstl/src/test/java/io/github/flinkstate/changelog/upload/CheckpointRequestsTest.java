package io.github.flinkstate.changelog.upload;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** When a checkpoint's batch may be cut: every writer waited for asked. */
class CheckpointRequestsTest {

    private final Object a = "a";
    private final Object b = "b";
    private final CheckpointRequests requests = new CheckpointRequests();

    @Test
    void theBatchIsCutWhenTheLastOpenWriterAsks_andLaterRequestsOfTheRoundGoAtOnce() {
        assertThat(requests.ask(a, 1, List.of(a, b))).isFalse();
        assertThat(requests.ask(b, 1, List.of(a, b))).isTrue();
        assertThat(requests.ask(a, 1, List.of(a, b))).as("after the cut").isTrue();
        assertThat(requests.ask(b, 0, List.of(a, b))).as("an older round, after the cut").isTrue();
    }

    @Test
    void anOlderRoundsRequest_joinsTheCurrentRoundsBatch() {
        assertThat(requests.ask(a, 2, List.of(a, b))).isFalse();
        assertThat(requests.ask(b, 1, List.of(a, b))).as("b's late request of round 1").isFalse();
        assertThat(requests.ask(b, 2, List.of(a, b))).isTrue();
    }

    @Test
    void aWriterSkippingTheLimitOfRoundsIsNotWaitedFor_untilItAsksAgain() {
        List<Object> open = List.of(a, b);
        long id = 1;
        for (int i = 0; i < CheckpointRequests.MISSED_ROUNDS_LIMIT; i++, id++) {
            assertThat(requests.ask(a, id, open)).as("b still waited for, round " + id).isFalse();
        }
        assertThat(requests.ask(a, id, open)).as("b presumed leaked").isTrue();
        assertThat(requests.presumedLeaked(open)).isEqualTo(1);

        id++;
        assertThat(requests.ask(b, id, open)).as("b asks again, a not yet").isFalse();
        assertThat(requests.presumedLeaked(open)).isZero();
        assertThat(requests.ask(a, id, open)).isTrue();
    }

    @Test
    void aWriterOpenedDuringARoundIsWaitedFor() {
        assertThat(requests.ask(a, 1, List.of(a))).isTrue();
        Object restored = "restored";
        assertThat(requests.ask(a, 2, List.of(a, restored))).isFalse();
        assertThat(requests.ask(restored, 2, List.of(a, restored))).isTrue();
    }

    @Test
    void closedWritersDropOut() {
        assertThat(requests.ask(a, 1, List.of(a, b))).isFalse();
        // b closed without asking: the next round waits for a only
        assertThat(requests.ask(a, 2, List.of(a))).isTrue();
        assertThat(requests.presumedLeaked(List.of(a, b))).isZero();
    }
}
