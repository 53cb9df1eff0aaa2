package io.github.flinkstate.cluster.harness;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;

/** Recursive file listings on HDFS, as path components. Stateless and thread-safe. */
public final class HdfsListing {

    private HdfsListing() {}

    /** Every file (not directory) under {@code root}; empty if it does not exist. */
    public static List<String> files(FileSystem fs, String root) throws IOException {
        Path p = new Path(root);
        List<String> out = new ArrayList<>();
        if (!fs.exists(p)) {
            return out;
        }
        RemoteIterator<LocatedFileStatus> it = fs.listFiles(p, true);
        while (it.hasNext()) {
            out.add(it.next().getPath().toUri().getPath());
        }
        return out;
    }

    /** Every file under {@code root} with its modification time (ms since the epoch). */
    public static java.util.Map<String, Long> filesWithTimes(FileSystem fs, String root)
            throws IOException {
        Path p = new Path(root);
        java.util.Map<String, Long> out = new java.util.TreeMap<>();
        if (!fs.exists(p)) {
            return out;
        }
        RemoteIterator<LocatedFileStatus> it = fs.listFiles(p, true);
        while (it.hasNext()) {
            LocatedFileStatus f = it.next();
            out.put(f.getPath().toUri().getPath(), f.getModificationTime());
        }
        return out;
    }

    /** The directories {@code chk-N} under {@code root} that hold a {@code _metadata} file. */
    public static List<String> completedCheckpointDirs(FileSystem fs, String root)
            throws IOException {
        List<String> dirs = new ArrayList<>();
        for (String f : files(fs, root)) {
            if (f.endsWith("/_metadata")) {
                dirs.add(f.substring(0, f.length() - "/_metadata".length()));
            }
        }
        return dirs;
    }
}
