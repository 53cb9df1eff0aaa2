package io.github.flinkstate.disagg.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Which of the warm-up's files may be opened: L0 always, hinted ones and the rest by room. */
class WarmUpOpensTest {

    @Test
    void l0FilesOpenAlways_hintedOnesWhileTheirShareHasRoom_theRestWhileTheirsHas() {
        WarmUpOpens noRoom = new WarmUpOpens(List.of(), 2, 3, () -> false, () -> false);
        WarmUpOpens roomForHinted = new WarmUpOpens(List.of(), 2, 3, () -> false, () -> true);
        WarmUpOpens room = new WarmUpOpens(List.of(), 2, 3, () -> true, () -> false);
        for (int i = 0; i < 8; i++) {
            boolean l0 = i < 2;
            boolean hinted = i >= 2 && i < 5;
            assertThat(noRoom.mayOpen(i)).as("file %d, no room", i).isEqualTo(l0);
            assertThat(roomForHinted.mayOpen(i)).as("file %d", i).isEqualTo(l0 || hinted);
            assertThat(room.mayOpen(i)).as("file %d", i).isEqualTo(!hinted);
        }
    }
}
