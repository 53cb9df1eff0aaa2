package io.github.flinkstate.benchmarks.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The committed configuration reference is what the code generates, and misses no option. */
class ConfigReferenceTest {

    private static final Path ROOT = Paths.get("..").toAbsolutePath().normalize();

    @Test
    void committedReferenceIsUpToDate() throws Exception {
        Path committed = ROOT.resolve("docs").resolve("configuration.md");
        assertThat(Files.readString(committed, StandardCharsets.UTF_8))
                .as(
                        "docs/configuration.md is stale; regenerate it with: "
                                + ConfigReferenceGenerator.REGENERATE_COMMAND)
                .isEqualTo(ConfigReferenceGenerator.render(ROOT));
    }

    @Test
    void everyDeclaredOptionIsDocumented() {
        List<ConfigReferenceGenerator.OptionDoc> documented =
                ConfigReferenceGenerator.collect(ROOT);
        assertThat(documented)
                .as(
                        "options declared in main sources (ConfigOptions.key calls) vs options the"
                                + " reference lists (public static ConfigOption fields of the classes"
                                + " that declare them); an option kept in a local variable or a"
                                + " non-public field is missing from the reference")
                .hasSize(OptionsClassScanner.countOptionDeclarations(ROOT));
        assertThat(documented.stream().map(d -> d.option().key()))
                .as("option keys are unique")
                .doesNotHaveDuplicates();
    }

    @Test
    void everyModuleWithOptionsHasASection() throws Exception {
        String reference = ConfigReferenceGenerator.render(ROOT);
        for (String module : OptionsClassScanner.optionClassesByModule(ROOT).keySet()) {
            assertThat(reference).contains("\n## " + module + "\n");
        }
        assertThat(OptionsClassScanner.optionClassesByModule(ROOT))
                .containsKeys("flink-state-lru-cache", "flink-state-changelog-dstl");
    }
}
