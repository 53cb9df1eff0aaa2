package io.github.flinkstate.testing.fs;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

/**
 * Listing a directory that other threads change while a test watches it. Flink's local file system
 * lists the names first and then reads each name's status, so a file deleted in between makes the
 * whole listing fail with {@link FileNotFoundException}; HDFS reports a missing directory the same
 * way, where the local file system returns {@code null}. Here both mean what a test wants: the
 * listing is taken again (for at most 10 s, a millisecond apart), and a directory that does not
 * exist lists as empty.
 *
 * <p>Thread safety: stateless.
 */
public final class Listings {

    /**
     * How long listings are taken again while files keep vanishing before the error is reported.
     */
    private static final long RETRY_NANOS = 10_000_000_000L;

    private Listings() {}

    /**
     * The names of the entries of {@code dir}, in the file system's order; empty if it is absent.
     */
    public static List<String> names(FileSystem fs, Path dir) throws IOException {
        long deadline = System.nanoTime() + RETRY_NANOS;
        while (true) {
            FileStatus[] entries;
            try {
                entries = fs.listStatus(dir);
            } catch (FileNotFoundException e) {
                if (!fs.exists(dir)) {
                    return List.of();
                }
                if (System.nanoTime() - deadline > 0) {
                    throw e;
                }
                sleepBriefly();
                continue; // an entry was deleted between the listing of names and its status
            }
            List<String> names = new ArrayList<>();
            for (FileStatus s : entries == null ? new FileStatus[0] : entries) {
                names.add(s.getPath().getName());
            }
            return names;
        }
    }

    private static void sleepBriefly() throws InterruptedIOException {
        try {
            Thread.sleep(1);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while listing again");
        }
    }

    /** The number of entries of {@code dir} whose name ends with {@code suffix}. */
    public static int count(FileSystem fs, Path dir, String suffix) throws IOException {
        int n = 0;
        for (String name : names(fs, dir)) {
            if (name.endsWith(suffix)) {
                n++;
            }
        }
        return n;
    }
}
