package io.github.flinkstate.disagg.engine.version;

import static io.github.flinkstate.disagg.engine.version.ManifestCodecTest.file;
import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.disagg.engine.key.KeyGroupSpan;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link Version#holds}: whether a version lists a path (the warm-up asks before each read). */
class VersionTest {

    @Test
    void holdsThePathsOfItsFilesOnly_inEveryLevel() {
        List<List<FileMeta>> levels = new ArrayList<>();
        levels.add(new ArrayList<>(List.of(file("l0", 0, 7))));
        levels.add(new ArrayList<>(List.of(file("a", 0, 3), file("b", 4, 7))));
        Version v = new VersionSet(KeyGroupSpan.of(0, 7), levels, f -> {}).current();
        assertThat(v.holds("file:/tmp/l0")).isTrue();
        assertThat(v.holds("file:/tmp/a")).isTrue();
        assertThat(v.holds("file:/tmp/b")).isTrue();
        assertThat(v.holds("file:/tmp/gone")).isFalse();
    }
}
