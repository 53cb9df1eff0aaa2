package io.github.flinkstate.benchmarks.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * Finds, in the project's source tree, every main (non-test) Java class that declares Flink
 * configuration options, grouped by module. A class declares options when its source calls {@code
 * ConfigOptions.key(}. Nothing is listed by hand, so an options class added to any module is found
 * by construction.
 *
 * <p>Thread safety: stateless; each call walks the tree anew.
 */
final class OptionsClassScanner {

    /** Marks a source file that defines at least one option. */
    static final String OPTION_MARKER = "ConfigOptions.key(";

    private static final String MAIN_SOURCES = "src/main/java/";

    private OptionsClassScanner() {}

    /**
     * Returns module directory name to the fully qualified names of its option-declaring classes,
     * both sorted.
     */
    static Map<String, List<String>> optionClassesByModule(Path projectRoot) {
        Map<String, List<String>> byModule = new TreeMap<>();
        for (Path source : mainSources(projectRoot)) {
            if (!read(source).contains(OPTION_MARKER)) {
                continue;
            }
            String relative = projectRoot.relativize(source).toString().replace('\\', '/');
            int sourcesAt = relative.indexOf(MAIN_SOURCES);
            String module = relative.substring(0, relative.indexOf('/'));
            String className =
                    relative.substring(sourcesAt + MAIN_SOURCES.length(), relative.length() - 5)
                            .replace('/', '.');
            byModule.computeIfAbsent(module, m -> new ArrayList<>()).add(className);
        }
        byModule.values().forEach(classes -> classes.sort(String::compareTo));
        return byModule;
    }

    /** Counts the {@code ConfigOptions.key(} calls in all main sources of the project. */
    static int countOptionDeclarations(Path projectRoot) {
        int count = 0;
        for (Path source : mainSources(projectRoot)) {
            String text = read(source);
            for (int at = text.indexOf(OPTION_MARKER);
                    at >= 0;
                    at = text.indexOf(OPTION_MARKER, at + 1)) {
                count++;
            }
        }
        return count;
    }

    private static List<Path> mainSources(Path projectRoot) {
        if (!Files.isRegularFile(projectRoot.resolve("pom.xml"))) {
            throw new IllegalArgumentException(
                    "Not the project root (no pom.xml): " + projectRoot.toAbsolutePath());
        }
        try (Stream<Path> files = Files.walk(projectRoot)) {
            return files.filter(p -> p.toString().endsWith(".java"))
                    .filter(
                            p -> {
                                String s = projectRoot.relativize(p).toString().replace('\\', '/');
                                return s.indexOf('/') > 0
                                        && s.contains("/" + MAIN_SOURCES)
                                        && !s.contains("/target/")
                                        // this scanner's own marker constant is not an option
                                        && !s.endsWith("/docs/OptionsClassScanner.java");
                            })
                    .sorted()
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot list sources under " + projectRoot, e);
        }
    }

    private static String read(Path source) {
        try {
            return Files.readString(source, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot read " + source, e);
        }
    }
}
