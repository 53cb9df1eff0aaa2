package io.github.flinkstate.disagg.backend.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import org.junit.jupiter.api.Test;

/** The contract of {@link FileOwnership}: exactly one party deletes each engine file. */
class FileOwnershipTest {

    private final FileOwnership ownership = new FileOwnership();

    @Test
    void obsoleteBeforeTheDiscard_theDiscardDeletes() {
        ownership.handedOver(1, Set.of("f"));
        assertThat(ownership.obsolete("f")).as("the store must not delete it yet").isFalse();
        assertThat(ownership.discarded(1)).containsExactly("f");
        assertThat(ownership.isHandedOver("f")).isFalse();
    }

    @Test
    void discardBeforeObsolete_theStoreDeletes() {
        ownership.handedOver(1, Set.of("f"));
        assertThat(ownership.discarded(1)).as("still live: back to the store").isEmpty();
        assertThat(ownership.obsolete("f")).isTrue();
    }

    @Test
    void namedByAnotherPendingHandle_staysHandedOver() {
        ownership.handedOver(1, Set.of("f"));
        ownership.handedOver(2, Set.of("f"));
        assertThat(ownership.obsolete("f")).isFalse();
        assertThat(ownership.discarded(2)).isEmpty();
        assertThat(ownership.isHandedOver("f")).isTrue();
        assertThat(ownership.discarded(1)).containsExactly("f");
    }

    @Test
    void completed_flinkOwnsIt_nobodyElseDeletes() {
        ownership.handedOver(1, Set.of("f"));
        ownership.completed(1);
        assertThat(ownership.discarded(1)).isEmpty();
        assertThat(ownership.obsolete("f")).isFalse();
    }

    @Test
    void obsoleteAndOnlyInAbortedCheckpoints_settledByALaterCompletion() {
        ownership.handedOver(1, Set.of("f")); // acknowledged, registered, then aborted
        assertThat(ownership.obsolete("f")).isFalse();
        ownership.handedOver(2, Set.of("g"));
        ownership.completed(2);
        assertThat(ownership.discarded(1)).as("the registry owns it").isEmpty();
        assertThat(ownership.isHandedOver("f")).as("forgotten").isFalse();
    }

    @Test
    void neverHandedOver_theStoreDeletes() {
        assertThat(ownership.obsolete("f")).isTrue();
    }
}
