package io.github.flinkstate.lru.cow;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** The doorkeeper of blind writes into a full cache: refuses first writes, admits repeats. */
class BlindWriteAdmissionTest {

    @Test
    void admitsAnIdentityRefusedRecently() {
        BlindWriteAdmission admission = new BlindWriteAdmission(1_000);
        assertThat(admission.admit(42)).isFalse();
        assertThat(admission.admit(42)).isTrue();
        assertThat(admission.admit(42)).isTrue();
    }

    @Test
    void admitsFewFirstWritesByCollision_andForgetsAfterMaxEntriesRefusals() {
        BlindWriteAdmission admission = new BlindWriteAdmission(2_000);
        Random random = new Random(7);
        int admitted = 0;
        int n = 100_000;
        for (int i = 0; i < n; i++) {
            if (admission.admit(random.nextInt())) {
                admitted++;
            }
        }
        // at most 2,000 of 16,384 bits are set at any time: below 1 in 8 admitted by collision
        assertThat((double) admitted / n).isLessThan(0.125);

        // an identity is forgotten once 2,000 other identities were refused after it
        BlindWriteAdmission fresh = new BlindWriteAdmission(2_000);
        assertThat(fresh.admit(-5)).isFalse();
        int refused = 0;
        for (int h = 1; refused < 1_999; h++) {
            if (!fresh.admit(h * 7919)) {
                refused++;
            }
        }
        assertThat(fresh.admit(-5)).isFalse();
    }

    @Test
    void aTinyCacheStillRemembersTheLastThousandRefusals() {
        BlindWriteAdmission admission = new BlindWriteAdmission(2);
        assertThat(admission.admit(1)).isFalse();
        for (int h = 2; h < 500; h++) {
            admission.admit(h * 7919);
        }
        assertThat(admission.admit(1)).isTrue();
    }
}
