package io.github.flinkstate.changelog.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.runtime.state.memory.ByteStreamStateHandle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Reference counting and hand-over rules of {@link TaskFileRegistry}. */
class TaskFileRegistryTest {

    private final List<Runnable> deletions = new ArrayList<>();
    private final TaskFileRegistry registry = new TaskFileRegistry(deletions::add);

    private static ByteStreamStateHandle file(String name) {
        return new ByteStreamStateHandle(name, new byte[] {1});
    }

    @AfterEach
    void checkInvariants() {
        registry.checkInvariants();
    }

    @Test
    void lastRelease_deletesFile() {
        ByteStreamStateHandle f = file("a");
        registry.track(f, 2);
        registry.release(f);
        assertThat(deletions).isEmpty();
        registry.release(f);
        assertThat(deletions).hasSize(1);
        assertThat(registry.isTracked(f)).isFalse();
        deletions.forEach(Runnable::run);
        assertThat(registry.deletedFiles()).isEqualTo(1);
    }

    @Test
    void handedOverFile_isNeverDeleted() {
        ByteStreamStateHandle f = file("b");
        registry.track(f, 2);
        registry.release(f);
        registry.handOver(f);
        registry.release(f);
        registry.release(f);
        assertThat(deletions).isEmpty();
        assertThat(registry.trackedFiles()).isZero();
    }

    @Test
    void untrackedRelease_isIgnored() {
        registry.release(file("c"));
        assertThat(deletions).isEmpty();
    }

    @Test
    void doubleTrack_isRejected() {
        ByteStreamStateHandle f = file("d");
        registry.track(f, 1);
        assertThatThrownBy(() -> registry.track(f, 1)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> registry.track(file("e"), 0))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void referenceInDoubt_isReleasedAfterNumRetainedNewerConfirmations() {
        TaskFileRegistry twoRetained = new TaskFileRegistry(deletions::add, 2);
        ByteStreamStateHandle f = file("f");
        twoRetained.track(f, 1);
        twoRetained.checkpointConfirmed(5); // not newer than the file's checkpoint
        twoRetained.releaseWhenSubsumed(f, 5, this);
        assertThat(twoRetained.referencesInDoubt()).isOne();
        twoRetained.checkpointConfirmed(6); // checkpoint 5 may still be retained (2 kept)
        assertThat(deletions).isEmpty();
        twoRetained.checkInvariants();
        twoRetained.checkpointConfirmed(8);
        assertThat(deletions).hasSize(1);
        assertThat(twoRetained.referencesInDoubt()).isZero();
        twoRetained.checkInvariants();
    }

    @Test
    void referenceInDoubt_ofASubsumedCheckpoint_isReleasedAtOnce() {
        ByteStreamStateHandle f = file("g");
        registry.track(f, 2);
        registry.checkpointConfirmed(3);
        registry.releaseWhenSubsumed(f, 2, this);
        registry.release(f);
        assertThat(deletions).hasSize(1);
    }

    @Test
    void referenceInDoubt_ofAHandedOverFile_isDropped() {
        ByteStreamStateHandle f = file("h");
        registry.track(f, 2);
        registry.releaseWhenSubsumed(f, 4, this);
        registry.handOver(f); // another change set of the file was confirmed: the JM owns it
        registry.checkpointConfirmed(5);
        assertThat(deletions).isEmpty();
        assertThat(registry.referencesInDoubt()).isZero();
    }
}
