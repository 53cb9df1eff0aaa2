package io.github.flinkstate.benchmarks.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.flinkstate.benchmarks.docs.ConfigReferenceGenerator;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.junit.jupiter.api.Test;

/** The committed configuration reference equals what the code generates. */
class ConfigReferenceTest {

    @Test
    void committedReferenceIsUpToDate() throws Exception {
        Path committed = Paths.get("..", "docs", "configuration.md");
        assertThat(new String(Files.readAllBytes(committed), StandardCharsets.UTF_8))
                .as(
                        "docs/configuration.md is stale: run ConfigReferenceGenerator (see the file's header)")
                .isEqualTo(ConfigReferenceGenerator.render());
    }
}
