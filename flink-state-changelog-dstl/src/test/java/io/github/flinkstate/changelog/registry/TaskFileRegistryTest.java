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

    @Test
    void closingWriter_handsOverOnlyFilesItStillDoubts() {
        Object w1 = "writer 1";
        Object w2 = "writer 2";
        ByteStreamStateHandle resolved = file("i"); // shared; w1's doubt resolved, w2 holds it
        ByteStreamStateHandle doubted = file("j"); // w1 still doubts it
        registry.track(resolved, 2);
        registry.track(doubted, 1);
        registry.releaseWhenSubsumed(resolved, 2, w1);
        registry.checkpointConfirmed(3); // subsumes 2: w1's reference on "i" is released
        registry.releaseWhenSubsumed(doubted, 3, w1);

        assertThat(registry.handOverInDoubt(w2)).isZero();
        assertThat(registry.handOverInDoubt(w1)).isOne();
        assertThat(registry.isTracked(doubted)).isFalse(); // handed over: never deleted here
        assertThat(registry.isTracked(resolved)).isTrue();
        registry.release(resolved); // w2's share: the last one
        assertThat(deletions).hasSize(1);
    }

    @Test
    void handOverUnlessSubsumed_releasesOnlyWhenNoRetainedCheckpointCanHoldIt() {
        TaskFileRegistry twoRetained = new TaskFileRegistry(deletions::add, 2);
        ByteStreamStateHandle f = file("k");
        ByteStreamStateHandle g = file("l");
        twoRetained.track(f, 1);
        twoRetained.track(g, 1);
        twoRetained.checkpointConfirmed(5);
        twoRetained.checkpointConfirmed(6);
        assertThat(twoRetained.handOverUnlessSubsumed(f, 5)).isTrue(); // 5 may be retained
        assertThat(twoRetained.handOverUnlessSubsumed(g, 4)).isFalse(); // 5 and 6 are
        assertThat(deletions).hasSize(1);
        assertThat(twoRetained.trackedFiles()).isZero();
        twoRetained.checkInvariants();
    }
}
