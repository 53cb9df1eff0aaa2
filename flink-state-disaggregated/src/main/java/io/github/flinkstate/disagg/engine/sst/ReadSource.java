package io.github.flinkstate.disagg.engine.sst;

import java.io.IOException;

/**
 * One open way to read one file, borrowed from a {@link StreamPool} by one thread at a time: a
 * Flink input stream ({@link StreamReadSource}) or, for point reads on the local file system, a
 * file channel read positionally ({@link LocalChannelReadSource}).
 *
 * <p>Thread safety: none; the pool hands a source to one thread at a time.
 */
interface ReadSource {

    /**
     * Reads exactly {@code len} bytes at {@code position} into {@code buf[off..off+len)}.
     *
     * @throws java.io.EOFException if the file ends before
     */
    void readFully(long position, byte[] buf, int off, int len) throws IOException;

    /** Whether a read is one positional request (no seek state). */
    boolean positional();

    void close() throws IOException;
}
