package io.github.flinkstate.testing.fs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.file.Files;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@link Listings} over Flink's local file system, with files vanishing while it lists. */
@Timeout(60)
class ListingsTest {

    @TempDir File tmp;

    private final FileSystem fs = FileSystem.getLocalFileSystem();

    @Test
    void anAbsentDirectory_listsAsEmpty() throws Exception {
        assertThat(Listings.names(fs, new Path(new File(tmp, "absent").toURI()))).isEmpty();
    }

    @Test
    void countsTheEntriesWithASuffix() throws Exception {
        Files.createFile(new File(tmp, "a.sst").toPath());
        Files.createFile(new File(tmp, "b.sst").toPath());
        Files.createFile(new File(tmp, "c.tmp").toPath());
        Path dir = new Path(tmp.toURI());
        assertThat(Listings.names(fs, dir)).containsExactlyInAnyOrder("a.sst", "b.sst", "c.tmp");
        assertThat(Listings.count(fs, dir, ".sst")).isEqualTo(2);
    }

    /**
     * A file deleted between the listing of names and the reading of its status does not fail the
     * listing (it failed a test that waited for a store to delete its files, in CI).
     */
    @Test
    void filesDeletedWhileListing_doNotFailTheListing() throws Exception {
        for (int i = 0; i < 50; i++) {
            Files.createFile(new File(tmp, "stable-" + i).toPath());
        }
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong churned = new AtomicLong();
        AtomicReference<Exception> churnFailure = new AtomicReference<>();
        Thread churn =
                new Thread(
                        () -> {
                            File f = new File(tmp, "churn");
                            try {
                                while (!stop.get()) {
                                    Files.deleteIfExists(f.toPath());
                                    Files.createFile(f.toPath());
                                    churned.incrementAndGet();
                                }
                            } catch (Exception e) {
                                churnFailure.set(e);
                            }
                        });
        churn.start();
        try {
            Path dir = new Path(tmp.toURI());
            for (int i = 0; i < 3000; i++) {
                List<String> names = Listings.names(fs, dir);
                assertThat(names.stream().filter(n -> n.startsWith("stable-"))).hasSize(50);
            }
        } finally {
            stop.set(true);
            churn.join();
        }
        assertThat(churnFailure.get()).isNull();
        assertThat(churned.get()).as("files deleted and created while listing").isPositive();
    }
}
