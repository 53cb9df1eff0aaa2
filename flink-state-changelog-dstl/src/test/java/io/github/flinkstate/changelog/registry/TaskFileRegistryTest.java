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
}
