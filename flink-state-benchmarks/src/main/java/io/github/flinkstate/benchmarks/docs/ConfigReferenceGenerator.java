package io.github.flinkstate.benchmarks.docs;

import io.github.flinkstate.lru.LruCacheOptions;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.description.HtmlFormatter;

/**
 * Generates {@code docs/configuration.md} from the modules' {@link ConfigOption}s, so the reference
 * never drifts from the code. {@code ConfigReferenceTest} fails when the committed file is out of
 * date.
 *
 * <p>Usage: {@code ConfigReferenceGenerator [output-file]} (default {@code docs/configuration.md}).
 */
public final class ConfigReferenceGenerator {

    private ConfigReferenceGenerator() {}

    /** The options of every module, grouped by module. Add new option classes here. */
    static Map<String, List<ConfigOption<?>>> options() {
        Map<String, List<ConfigOption<?>>> byModule = new LinkedHashMap<>();
        byModule.put(
                "flink-state-lru-cache (`LruCacheOptions`)",
                List.of(
                        LruCacheOptions.MAX_ENTRIES_NUM,
                        LruCacheOptions.COPY_VALUES_ON_WRITE,
                        LruCacheOptions.DELEGATE));
        return byModule;
    }

    public static String render() {
        StringBuilder sb = new StringBuilder();
        sb.append("# Configuration reference\n\n");
        sb.append(
                "Generated from the code by `ConfigReferenceGenerator` (module flink-state-benchmarks);\n");
        sb.append("do not edit by hand. Regenerate with\n");
        sb.append(
                "`mvn -q -pl flink-state-benchmarks exec:java -Dexec.mainClass=io.github.flinkstate.benchmarks.docs.ConfigReferenceGenerator`.\n");
        for (Map.Entry<String, List<ConfigOption<?>>> module : options().entrySet()) {
            sb.append("\n## ").append(module.getKey()).append("\n\n");
            sb.append("| key | default | description |\n|---|---|---|\n");
            for (ConfigOption<?> option : module.getValue()) {
                sb.append("| `").append(option.key()).append("` | ");
                sb.append(option.hasDefaultValue() ? "`" + option.defaultValue() + "`" : "(none)");
                sb.append(" | ")
                        .append(
                                new HtmlFormatter()
                                        .format(option.description())
                                        .replace("|", "\\|")
                                        .replace("\n", " "));
                sb.append(" |\n");
            }
        }
        return sb.toString();
    }

    public static void main(String[] args) throws IOException {
        Path out = Paths.get(args.length > 0 ? args[0] : "docs/configuration.md");
        Files.write(out, render().getBytes(StandardCharsets.UTF_8));
        System.out.println("Wrote " + out.toAbsolutePath());
    }
}
