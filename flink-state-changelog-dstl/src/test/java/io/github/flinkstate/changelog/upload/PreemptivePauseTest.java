package io.github.flinkstate.changelog.upload;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.flink.runtime.io.AvailabilityProvider;
import org.junit.jupiter.api.Test;

/**
 * The pause of pre-emptive uploads after failures: one failed batch reports its failure once per
 * writer it carried, and those reports must not lengthen the pause (they did: with six writers the
 * first failure paused for 30 s instead of 1 s); a success ends the pause (it did not). Found in
 * the reread of the change that added the pause.
 */
class PreemptivePauseTest {

    private final PreemptiveUploads uploads =
            new PreemptiveUploads(10, () -> AvailabilityProvider.AVAILABLE);

    @Test
    void failuresDuringAPause_doNotLengthenIt() {
        for (int writer = 0; writer < 6; writer++) {
            uploads.uploadFailed(); // one failed batch of six writers
        }
        assertThat(uploads.pauseLeftNanos())
                .isPositive()
                .isLessThanOrEqualTo(PreemptiveUploads.FIRST_PAUSE_NANOS);
    }

    @Test
    void aSuccess_endsThePause() {
        uploads.uploadFailed();
        assertThat(uploads.pauseLeftNanos()).isPositive();
        uploads.uploadSucceeded();
        assertThat(uploads.pauseLeftNanos()).isZero();
    }
}
