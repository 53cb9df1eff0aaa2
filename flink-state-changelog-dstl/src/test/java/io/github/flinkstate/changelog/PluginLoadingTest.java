package io.github.flinkstate.changelog;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.StateChangelogOptions;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.plugin.DefaultPluginManager;
import org.apache.flink.core.plugin.DirectoryBasedPluginFinder;
import org.apache.flink.core.plugin.PluginManager;
import org.apache.flink.runtime.metrics.groups.UnregisteredMetricGroups;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.LocalRecoveryConfig;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.changelog.ChangelogStateHandle;
import org.apache.flink.runtime.state.changelog.StateChange;
import org.apache.flink.runtime.state.changelog.StateChangelogHandleReader;
import org.apache.flink.runtime.state.changelog.StateChangelogStorage;
import org.apache.flink.runtime.state.changelog.StateChangelogStorageLoader;
import org.apache.flink.runtime.state.changelog.StateChangelogStorageView;
import org.apache.flink.runtime.state.changelog.StateChangelogWriter;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The storage loads from Flink's {@code plugins/} layout ({@code plugins/<name>/<jar>}, own class
 * loader) the way a TaskManager loads it ({@link StateChangelogStorageLoader#initialize} with the
 * plugin manager), writes, and reads back through the view Flink finds by the handle's identifier.
 * Loading from {@code lib/} (the application class path) is {@code
 * FactoriesTest#taskManagerLoader_createsOurStorage}.
 */
class PluginLoadingTest {

    @TempDir File tmp;

    @AfterEach
    void restoreLoader() {
        StateChangelogStorageLoader.initialize(null);
    }

    @Test
    @SuppressWarnings({"rawtypes", "unchecked"})
    void storageLoadsFromPluginsDirectory_writesAndReadsBack() throws Exception {
        File plugins = new File(tmp, "plugins");
        File pluginDir = new File(plugins, "dstl-dfs-batched");
        assertThat(pluginDir.mkdirs()).isTrue();
        writeModuleJar(new File(pluginDir, "flink-state-changelog-dstl.jar"));
        Configuration config = new Configuration();
        config.set(StateChangelogOptions.STATE_CHANGE_LOG_STORAGE, "dfs-batched");
        config.set(
                DfsChangelogOptions.BASE_PATH, new Path(new File(tmp, "dfs").toURI()).toString());
        config.set(DfsChangelogOptions.PERSIST_DELAY, java.time.Duration.ZERO);
        PluginManager pluginManager =
                new DefaultPluginManager(
                        new DirectoryBasedPluginFinder(plugins.toPath()).findPlugins(),
                        CoreOptions.getPluginParentFirstLoaderPatterns(config));
        StateChangelogStorageLoader.initialize(pluginManager);

        StateChangelogStorage<?> storage =
                StateChangelogStorageLoader.load(
                        new JobID(),
                        config,
                        UnregisteredMetricGroups.createUnregisteredTaskManagerJobMetricGroup(),
                        LocalRecoveryConfig.BACKUP_AND_RECOVERY_DISABLED);
        assertThat(storage).isNotNull();
        assertThat(storage.getClass().getName())
                .isEqualTo(DfsBatchedChangelogStorage.class.getName());
        assertThat(storage.getClass().getClassLoader())
                .as("loaded by the plugin's class loader, not from the class path")
                .isNotSameAs(DfsBatchedChangelogStorage.class.getClassLoader());
        try {
            StateChangelogWriter writer = storage.createWriter("op", KeyGroupRange.of(0, 3), null);
            writer.append(1, "a".getBytes(StandardCharsets.UTF_8));
            writer.append(2, "b".getBytes(StandardCharsets.UTF_8));
            ChangelogStateHandle handle =
                    (ChangelogStateHandle)
                            ((SnapshotResult<?>)
                                            writer.persist(writer.initialSequenceNumber(), 1)
                                                    .get(1, TimeUnit.MINUTES))
                                    .getJobManagerOwnedSnapshot();
            writer.close();
            assertThat(handle.getStorageIdentifier()).isEqualTo("dfs-batched");

            try (StateChangelogStorageView<?> view =
                    StateChangelogStorageLoader.loadFromStateHandle(config, handle)) {
                assertThat(view.getClass().getClassLoader())
                        .isSameAs(storage.getClass().getClassLoader());
                StateChangelogHandleReader reader = view.createReader();
                List<String> read = new ArrayList<>();
                try (CloseableIterator<StateChange> it = reader.getChanges(handle)) {
                    while (it.hasNext()) {
                        StateChange change = it.next();
                        read.add(
                                change.getKeyGroup()
                                        + ":"
                                        + new String(change.getChange(), StandardCharsets.UTF_8));
                    }
                }
                assertThat(read).containsExactly("1:a", "2:b");
            }
        } finally {
            storage.close();
            // the storage's class is the plugin's, not the one this test sees: its wait for the
            // background uploads and deletions (TestStorages.closeAndAwait) is called
            // reflectively, so that the temporary directory is not deleted under a late deletion
            Object stopped =
                    storage.getClass()
                            .getMethod("awaitBackgroundWork", Duration.class)
                            .invoke(storage, Duration.ofSeconds(60));
            assertThat(stopped).as("background work stopped after close").isEqualTo(true);
        }
    }

    /** Packs this module's compiled classes and service files as its plugin jar would hold them. */
    private static void writeModuleJar(File jar) throws IOException {
        java.nio.file.Path classes;
        try {
            classes =
                    java.nio.file.Path.of(
                            DfsBatchedChangelogStorageFactory.class
                                    .getProtectionDomain()
                                    .getCodeSource()
                                    .getLocation()
                                    .toURI());
        } catch (java.net.URISyntaxException e) {
            throw new IOException(e);
        }
        assertThat(classes.resolve("META-INF/services")).isDirectory();
        try (OutputStream file = Files.newOutputStream(jar.toPath());
                JarOutputStream out = new JarOutputStream(file);
                Stream<java.nio.file.Path> files = Files.walk(classes)) {
            for (java.nio.file.Path path : (Iterable<java.nio.file.Path>) files::iterator) {
                if (Files.isRegularFile(path)) {
                    out.putNextEntry(
                            new JarEntry(classes.relativize(path).toString().replace('\\', '/')));
                    Files.copy(path, out);
                    out.closeEntry();
                }
            }
        }
    }
}
