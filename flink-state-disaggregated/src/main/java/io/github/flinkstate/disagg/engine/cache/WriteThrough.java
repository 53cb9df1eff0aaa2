package io.github.flinkstate.disagg.engine.cache;

import java.io.BufferedOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.util.Arrays;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The local copy of an SST file while the store writes it: every byte written to the primary file
 * is also written here, and {@link #commit} hands the finished copy to the {@link DiskCache}, so
 * the first reads of a freshly flushed or compacted file are local. A local failure (full disk, I/O
 * error) only abandons the copy: it never fails the primary write. The copy reserves its space in
 * the cache in steps of {@link #RESERVE_STEP} bytes ahead of its writes (not past the file's length
 * when it is known), so that the cache's capacity bounds the copies being written too; a copy that
 * cannot reserve is abandoned.
 *
 * <p>Thread safety: confined to the writing thread.
 */
public final class WriteThrough {

    private static final Logger LOG = LoggerFactory.getLogger(WriteThrough.class);

    private final DiskCache cache;
    private final String sourceFile;
    private final File temp;
    private OutputStream out;
    private long written;
    private boolean failed;

    /** Space reserved ahead of the writes at least this many bytes at a time. */
    static final long RESERVE_STEP = 1L << 20;

    /** Bytes reserved in the cache for this copy and not yet given back. */
    private long reserved;

    /** How many of the last bytes written are kept for {@link LocalFileCopy#end}. */
    static final int END_BYTES = 32;

    /** The last {@code endFill} bytes written. */
    private final byte[] end = new byte[END_BYTES];

    private int endFill;

    /** The file's final length when known (a copy of an existing file), else 0. */
    private final long expectedLength;

    WriteThrough(DiskCache cache, String sourceFile, File temp, long expectedLength)
            throws IOException {
        this.cache = cache;
        this.sourceFile = sourceFile;
        this.temp = temp;
        this.expectedLength = expectedLength;
        this.out = new BufferedOutputStream(new FileOutputStream(temp), 64 << 10);
    }

    public void write(byte[] b, int off, int len) {
        if (failed) {
            return;
        }
        if (written + len > reserved && !reserveFor(written + len)) {
            LOG.debug("Local copy of {} abandoned: no room in the disk cache", sourceFile);
            abort();
            return;
        }
        try {
            out.write(b, off, len);
            written += len;
            keepEnd(b, off, len);
        } catch (IOException | RuntimeException e) {
            fail(e);
        }
    }

    /**
     * The primary file is complete with {@code length} bytes: the copy becomes a cache entry if it
     * holds exactly that many bytes and the cache has room. Returns whether it did.
     */
    public boolean commit(long length) {
        if (failed) {
            return false;
        }
        try {
            out.close();
            out = null;
        } catch (IOException e) {
            fail(e);
            return false;
        }
        if (written != length) {
            fail(new IOException("copied " + written + " bytes of " + length));
            return false;
        }
        return cache.commit(this, sourceFile, temp, length, Arrays.copyOf(end, endFill));
    }

    /** Keeps the last {@link #END_BYTES} bytes written, across writes. */
    private void keepEnd(byte[] b, int off, int len) {
        if (len >= END_BYTES) {
            System.arraycopy(b, off + len - END_BYTES, end, 0, END_BYTES);
            endFill = END_BYTES;
            return;
        }
        int keep = Math.min(endFill, END_BYTES - len);
        System.arraycopy(end, endFill - keep, end, 0, keep);
        System.arraycopy(b, off, end, keep, len);
        endFill = keep + len;
    }

    /**
     * Reserves space up to {@code total} bytes: a step ahead if it fits, else exactly; never past
     * the file's known length (a step past it would evict another unit for room the copy never
     * uses: in a cache of exactly the state's size, a whole copy the warm-up had just made).
     */
    private boolean reserveFor(long total) {
        long need = total - reserved;
        long step = Math.max(RESERVE_STEP, need);
        if (expectedLength > 0) {
            step = Math.max(need, Math.min(step, expectedLength - reserved));
        }
        if (cache.reserve(sourceFile, total, step)) {
            reserved += step;
            return true;
        }
        if (step > need && cache.reserve(sourceFile, total, need)) {
            reserved += need; // the last bytes of a file that just fits
            return true;
        }
        return false;
    }

    /** Whether the copy was abandoned (a local failure or no room): its writes do nothing. */
    public boolean abandoned() {
        return failed;
    }

    /** The primary write failed or was abandoned: deletes the copy. Idempotent. */
    public void abort() {
        if (out != null) {
            try {
                out.close();
            } catch (IOException ignored) {
                // deleted below
            }
            out = null;
        }
        failed = true;
        deleteTemp();
        cache.unreserve(takeReservation()); // after the delete: the space is free now
    }

    /** Hands over the space reserved so far (to be given back by the caller); zero afterwards. */
    long takeReservation() {
        long r = reserved;
        reserved = 0;
        return r;
    }

    private void fail(Exception e) {
        if (!failed) {
            LOG.warn(
                    "Local copy of {} abandoned (the primary file is unaffected): {}",
                    sourceFile,
                    e.toString());
            cache.recordWriteFailure();
        }
        abort();
    }

    private void deleteTemp() {
        try {
            Files.deleteIfExists(temp.toPath());
        } catch (IOException ignored) {
            // the directory is wiped when the cache closes
        }
    }
}
