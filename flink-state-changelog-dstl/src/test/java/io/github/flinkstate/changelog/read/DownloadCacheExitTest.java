package io.github.flinkstate.changelog.read;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A download cache that is never closed deletes its directory when the JVM exits. Flink's own test
 * harness ({@code TestTaskStateManager}) opens a storage view for every changelog restore and never
 * closes it: the conformance suites left about 400 {@code dstl-cache-*} directories with their
 * copies in the temporary directory per build.
 */
class DownloadCacheExitTest {

    @TempDir File tmp;

    @Test
    void anUnclosedCache_deletesItsDirectoryWhenTheJvmExits() throws Exception {
        File directory = new File(tmp, "dstl-cache-unclosed");
        Process child =
                new ProcessBuilder(
                                List.of(
                                        new File(System.getProperty("java.home"), "bin/java")
                                                .getPath(),
                                        "-cp",
                                        System.getProperty("java.class.path"),
                                        UnclosedCache.class.getName(),
                                        directory.getPath()))
                        .redirectErrorStream(true)
                        .redirectOutput(new File(tmp, "child.log"))
                        .start();
        assertThat(child.waitFor(2, TimeUnit.MINUTES)).as("the child JVM exited").isTrue();
        assertThat(child.exitValue())
                .as(Files.readString(new File(tmp, "child.log").toPath()))
                .isZero();
        assertThat(new File(tmp, "created")).as("the child filled the cache").exists();
        assertThat(directory).doesNotExist();
    }

    /** Opens a cache, puts a copy in its directory and exits without closing it. */
    public static final class UnclosedCache {
        public static void main(String[] args) throws Exception {
            File directory = new File(args[0]);
            new DownloadCache(directory, Runnable::run, Duration.ofHours(1), Duration.ZERO);
            Files.createDirectories(directory.toPath());
            Files.writeString(new File(directory, "dstl-copy").toPath(), "a local copy");
            Files.writeString(new File(directory.getParentFile(), "created").toPath(), "yes");
        }
    }
}
