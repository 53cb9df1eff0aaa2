package io.github.flinkstate.benchmarks.docs;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.description.HtmlFormatter;
import org.apache.flink.util.TimeUtils;

/**
 * Generates {@code docs/configuration.md} from every {@link ConfigOption} of every module, so the
 * reference never drifts from the code. The option classes are found in the source tree by {@link
 * OptionsClassScanner}; their {@code public static ConfigOption} fields are read by reflection, in
 * declaration order. {@code ConfigReferenceTest} fails when the committed file is stale or when an
 * option is declared where this generator cannot see it.
 *
 * <p>Usage: {@code ConfigReferenceGenerator [project-root]} (default: the working directory);
 * writes {@code <project-root>/docs/configuration.md}. Every module with options must be a
 * dependency of flink-state-benchmarks so that its classes load here.
 *
 * <p>Thread safety: stateless.
 */
public final class ConfigReferenceGenerator {

    static final String REGENERATE_COMMAND =
            "mvn -B -q install -DskipTests && mvn -B -q -pl flink-state-benchmarks exec:java"
                    + " -Dexec.mainClass=io.github.flinkstate.benchmarks.docs.ConfigReferenceGenerator";

    private ConfigReferenceGenerator() {}

    /** One documented option: where it is declared and its value type, as written in the code. */
    record OptionDoc(String module, Class<?> declaringClass, ConfigOption<?> option, Type type) {}

    /** Every option of the project, grouped by module and class, in declaration order. */
    static List<OptionDoc> collect(Path projectRoot) {
        List<OptionDoc> docs = new ArrayList<>();
        for (Map.Entry<String, List<String>> module :
                OptionsClassScanner.optionClassesByModule(projectRoot).entrySet()) {
            for (String className : module.getValue()) {
                Class<?> clazz = load(className, module.getKey());
                for (Field field : clazz.getDeclaredFields()) {
                    if (field.getType() == ConfigOption.class
                            && Modifier.isStatic(field.getModifiers())
                            && Modifier.isPublic(field.getModifiers())) {
                        docs.add(
                                new OptionDoc(
                                        module.getKey(),
                                        clazz,
                                        read(field),
                                        valueType(field.getGenericType())));
                    }
                }
            }
        }
        return docs;
    }

    public static String render(Path projectRoot) {
        StringBuilder sb = new StringBuilder();
        sb.append("# Configuration reference\n\n");
        sb.append("Generated from the code by `ConfigReferenceGenerator` (module")
                .append(
                        " flink-state-benchmarks): every `ConfigOption` of every module. Do not edit")
                .append(" by hand; regenerate with\n`")
                .append(REGENERATE_COMMAND)
                .append("`.\n");
        String module = null;
        Class<?> declaringClass = null;
        for (OptionDoc doc : collect(projectRoot)) {
            if (!doc.module().equals(module)) {
                module = doc.module();
                declaringClass = null;
                sb.append("\n## ").append(module).append('\n');
            }
            if (doc.declaringClass() != declaringClass) {
                declaringClass = doc.declaringClass();
                sb.append("\n`").append(declaringClass.getName()).append("`\n\n");
                sb.append("| key | type | default | description |\n|---|---|---|---|\n");
            }
            ConfigOption<?> option = doc.option();
            sb.append("| `").append(option.key()).append("` | ");
            sb.append(typeName(doc.type())).append(" | ");
            sb.append(
                    option.hasDefaultValue() && option.defaultValue() != null
                            ? "`" + formatValue(option.defaultValue()) + "`"
                            : "(none)");
            sb.append(" | ").append(cell(new HtmlFormatter().format(option.description())));
            if (!option.fallbackKeys().iterator().hasNext()) {
                sb.append(" |\n");
                continue;
            }
            List<String> fallbacks = new ArrayList<>();
            option.fallbackKeys().forEach(k -> fallbacks.add("`" + k.getKey() + "`"));
            sb.append(" Also read from: ").append(String.join(", ", fallbacks)).append(". |\n");
        }
        return sb.toString();
    }

    public static void main(String[] args) throws IOException {
        Path root = Paths.get(args.length > 0 ? args[0] : ".").toAbsolutePath().normalize();
        Path out = root.resolve("docs").resolve("configuration.md");
        Files.writeString(out, render(root), StandardCharsets.UTF_8);
        System.out.println("Wrote " + out);
    }

    private static Class<?> load(String className, String module) {
        try {
            return Class.forName(className);
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(
                    "Options class "
                            + className
                            + " of module "
                            + module
                            + " is not on the classpath of flink-state-benchmarks: add "
                            + module
                            + " as a dependency of flink-state-benchmarks",
                    e);
        }
    }

    private static ConfigOption<?> read(Field field) {
        try {
            return (ConfigOption<?>) field.get(null);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("Cannot read option field " + field, e);
        }
    }

    private static Type valueType(Type fieldType) {
        return fieldType instanceof ParameterizedType parameterized
                ? parameterized.getActualTypeArguments()[0]
                : Object.class;
    }

    private static String typeName(Type type) {
        if (type instanceof Class<?> clazz && clazz.isEnum()) {
            String values =
                    Arrays.stream(clazz.getEnumConstants())
                            .map(c -> "`" + c + "`")
                            .collect(Collectors.joining(", "));
            return "enum: " + values;
        }
        if (type instanceof ParameterizedType parameterized) {
            String args =
                    Arrays.stream(parameterized.getActualTypeArguments())
                            .map(ConfigReferenceGenerator::typeName)
                            .collect(Collectors.joining(", "));
            return typeName(parameterized.getRawType()) + "&lt;" + args + "&gt;";
        }
        return type instanceof Class<?> clazz ? clazz.getSimpleName() : type.getTypeName();
    }

    private static String formatValue(Object value) {
        return value instanceof Duration duration
                ? TimeUtils.formatWithHighestUnit(duration)
                : String.valueOf(value);
    }

    private static String cell(String text) {
        return text.replace("|", "\\|").replace("\n", " ");
    }
}
