package io.github.flinkstate.cluster.harness;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.hadoop.fs.FileSystem;

/**
 * Files on HDFS that no retained checkpoint or savepoint references: everything under the
 * scenario's checkpoint, savepoint and DSTL directories minus the files the retained checkpoints'
 * metadata names ({@link CheckpointReferences}). Flink and our backends delete unreferenced files
 * asynchronously after a checkpoint is subsumed or a job ends, so {@link #await} polls until the
 * listing is clean or a deadline passes, and returns what is left then.
 *
 * <p>Stateless and thread-safe.
 */
public final class LeftoverFiles {

    private LeftoverFiles() {}

    /**
     * @param roots directories to list (path components or URIs of the test JVM's HDFS)
     * @param retained checkpoint/savepoint directories (URIs as Flink reports them) meant to stay
     */
    public static Result list(FileSystem fs, List<String> roots, List<String> retained)
            throws IOException {
        Set<String> referenced = new HashSet<>();
        for (String dir : retained) {
            referenced.addAll(CheckpointReferences.of(fs, dir));
        }
        Map<String, Long> all = new TreeMap<>();
        for (String root : roots) {
            all.putAll(HdfsListing.filesWithTimes(fs, root));
        }
        Map<String, Long> leftovers = new TreeMap<>(all);
        leftovers.keySet().removeAll(referenced);
        return new Result(all.size(), referenced.size(), leftovers);
    }

    /** Polls {@link #list} until nothing is left over or {@code timeout} passes. */
    public static Result await(
            FileSystem fs, List<String> roots, List<String> retained, Duration timeout)
            throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Result r = list(fs, roots, retained);
            if (r.leftovers().isEmpty() || System.nanoTime() - deadline > 0) {
                return r;
            }
            Thread.sleep(250);
        }
    }

    /**
     * @param files files found under the roots
     * @param referenced files referenced by the retained checkpoints (with their metadata)
     * @param leftovers files found but not referenced, with their modification times
     */
    public record Result(int files, int referenced, Map<String, Long> leftovers) {

        /** Leftover paths, sorted. */
        public List<String> paths() {
            return new ArrayList<>(leftovers.keySet());
        }
    }
}
