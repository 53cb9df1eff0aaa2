package io.github.flinkstate.benchmarks.scenario.rescale;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.junit.jupiter.api.Test;

/**
 * The verify job carries its claim mode where state backends read it: ForSt and the disaggregated
 * backend take the claim mode from the configuration ({@code execution.state-recovery.claim-mode}),
 * as {@code flink run -s ... -claimMode} sets it; the restore settings on the job graph alone are
 * invisible to them (a CLAIM restore then ran as NO_CLAIM: ForSt copied every file, ours copied
 * them in the background).
 */
class RescaleJobsTest {

    @Test
    void verifyJob_carriesItsClaimModeInTheJobConfiguration() {
        for (RecoveryClaimMode mode :
                new RecoveryClaimMode[] {RecoveryClaimMode.CLAIM, RecoveryClaimMode.NO_CLAIM}) {
            JobGraph job =
                    RescaleJobs.verify(new Configuration(), 2, 10, 8, "file:///tmp/chk-1", mode);
            assertThat(job.getSavepointRestoreSettings().getRecoveryClaimMode()).isEqualTo(mode);
            assertThat(job.getJobConfiguration().get(StateRecoveryOptions.RESTORE_MODE))
                    .as("claim mode visible to the state backends")
                    .isEqualTo(mode);
        }
    }
}
