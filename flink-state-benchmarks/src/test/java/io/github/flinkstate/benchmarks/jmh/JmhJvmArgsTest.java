package io.github.flinkstate.benchmarks.jmh;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.annotations.Fork;

/** The JMH forks get exactly the parent pom's {@code flink.jvm.opens}, on every benchmark class. */
class JmhJvmArgsTest {

    private static final List<Class<?>> BENCHMARKS =
            List.of(
                    ValueStateBenchmark.class,
                    ListStateBenchmark.class,
                    MapStateBenchmark.class,
                    EngineBenchmark.class);

    private static List<String> pomOpens() throws Exception {
        String pom = Files.readString(Path.of("..", "pom.xml"), StandardCharsets.UTF_8);
        Matcher m =
                Pattern.compile("<flink\\.jvm\\.opens>(.*?)</flink\\.jvm\\.opens>", Pattern.DOTALL)
                        .matcher(pom);
        assertThat(m.find()).as("parent pom defines flink.jvm.opens").isTrue();
        return Arrays.asList(m.group(1).trim().split("\\s+"));
    }

    private static List<String> openConstants() throws IllegalAccessException {
        List<String> opens = new ArrayList<>();
        for (Field f : JmhJvmArgs.class.getFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getName().startsWith("OPEN_")) {
                opens.add((String) f.get(null));
            }
        }
        return opens;
    }

    @Test
    void constantsMatchParentPomProperty() throws Exception {
        assertThat(openConstants()).containsExactlyInAnyOrderElementsOf(pomOpens());
    }

    @Test
    void everyBenchmarkClassPassesAllOpensToItsForks() throws Exception {
        List<String> opens = pomOpens();
        for (Class<?> c : BENCHMARKS) {
            Fork fork = c.getAnnotation(Fork.class);
            assertThat(fork).as(c.getSimpleName() + " has @Fork").isNotNull();
            assertThat(fork.jvmArgsAppend()).as(c.getSimpleName()).containsAll(opens);
        }
    }
}
