package io.github.flinkstate.testing.wait;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class WaitsTest {

    @Test
    void until_returnsOnceTheConditionHolds() throws Exception {
        AtomicInteger polls = new AtomicInteger();
        Waits.until("three polls", Duration.ofSeconds(30), () -> polls.incrementAndGet() >= 3);
    }

    @Test
    void until_failsAtTheDeadlineNamingWhatWasAwaited() {
        assertThatThrownBy(() -> Waits.until("never", Duration.ofMillis(30), () -> false))
                .isInstanceOf(TimeoutException.class)
                .hasMessageContaining("waiting until never");
    }

    @Test
    void untilChecked_propagatesTheConditionsException() {
        assertThatThrownBy(
                        () ->
                                Waits.untilChecked(
                                        "boom",
                                        Duration.ofSeconds(30),
                                        () -> {
                                            throw new IllegalStateException("boom");
                                        }))
                .isInstanceOf(IllegalStateException.class);
    }
}
