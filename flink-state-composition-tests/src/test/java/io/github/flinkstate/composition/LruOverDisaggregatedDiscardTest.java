package io.github.flinkstate.composition;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RunnableFuture;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.local.LocalFileSystem;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.state.CheckpointableKeyedStateBackend;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.StateUtil;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.filesystem.FsCheckpointStreamFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The LRU cache over the disaggregated backend, whose checkpoint handles name every live file of
 * its running store: a checkpoint that Flink discards on the TaskManager (it was aborted or
 * declined after its asynchronous part finished) must delete none of them. Found in a review: the
 * cache discarded the delegate's handle itself, instead of through the delegate's future (which
 * reduces the handle to the files nobody else needs), and so deleted the files of the store and of
 * the last completed checkpoint.
 */
@Timeout(120)
class LruOverDisaggregatedDiscardTest {

    private static final ValueStateDescriptor<String> VALUE =
            new ValueStateDescriptor<>("v", StringSerializer.INSTANCE);

    @TempDir File tmp;

    @Test
    void aDiscardedCheckpoint_deletesNoFileOfTheStoreOrOfTheLastCompletedCheckpoint()
            throws Exception {
        Configuration config =
                ComposedBackends.lruCacheOverDisaggregated(new File(tmp, "primary"), 10);
        try (CanonicalSavepointHarness h =
                new CanonicalSavepointHarness(
                        tmp,
                        128,
                        ComposedBackends.changelogOverDisaggregated(new File(tmp, "dstl")))) {
            CheckpointableKeyedStateBackend<String> b = h.create(config, h.range(1, 0), List.of());
            ValueState<String> v =
                    b.getPartitionedState(
                            VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, VALUE);
            for (int i = 0; i < 2_000; i++) {
                b.setCurrentKey("k" + i);
                v.update("v" + i + "-" + "x".repeat(100));
            }
            IncrementalRemoteKeyedStateHandle first =
                    (IncrementalRemoteKeyedStateHandle)
                            checkpoint(b, 1).getJobManagerOwnedSnapshot();
            ((org.apache.flink.api.common.state.CheckpointListener) b).notifyCheckpointComplete(1);
            List<File> firstFiles = new ArrayList<>();
            first.getSharedState().forEach(e -> firstFiles.add(file(e.getHandle())));
            assertThat(firstFiles).isNotEmpty().allMatch(File::exists);

            for (int i = 0; i < 20; i++) { // dirty cache entries: the cache writes its stream
                b.setCurrentKey("k" + i);
                v.update("second-" + i);
            }
            RunnableFuture<SnapshotResult<KeyedStateHandle>> second = start(b, 2);
            second.run();
            StateUtil.discardStateFuture(second); // what Flink does with an aborted checkpoint

            assertThat(firstFiles)
                    .as("files of the last completed checkpoint")
                    .allMatch(File::exists);
            for (int i = 0; i < 2_000; i++) {
                b.setCurrentKey("k" + i);
                assertThat(v.value()).startsWith(i < 20 ? "second-" : "v" + i + "-");
            }
        }
    }

    private SnapshotResult<KeyedStateHandle> checkpoint(
            CheckpointableKeyedStateBackend<String> b, long id) throws Exception {
        RunnableFuture<SnapshotResult<KeyedStateHandle>> f = start(b, id);
        f.run();
        return f.get();
    }

    private RunnableFuture<SnapshotResult<KeyedStateHandle>> start(
            CheckpointableKeyedStateBackend<String> b, long id) throws Exception {
        File dir = new File(tmp, "checkpoints-" + id);
        dir.mkdirs();
        Path path = new Path(dir.toURI());
        return b.snapshot(
                id,
                System.currentTimeMillis(),
                new FsCheckpointStreamFactory(
                        LocalFileSystem.getSharedInstance(), path, path, 1024, 4096),
                CheckpointOptions.forCheckpointWithDefaultLocation());
    }

    private static File file(org.apache.flink.runtime.state.StreamStateHandle handle) {
        return new File(((FileStateHandle) handle).getFilePath().toUri().getPath());
    }
}
