package io.github.flinkstate.changelog.read;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * An input stream that reports every read to {@code onRead}, for the stall clocks of the download
 * cache and of reads in place: a read that returned (bytes or the end) is progress.
 *
 * <p>Thread safety: as the wrapped stream; {@code onRead} runs on the reading thread.
 */
final class ProgressInputStream extends FilterInputStream {

    private final Runnable onRead;

    ProgressInputStream(InputStream in, Runnable onRead) {
        super(in);
        this.onRead = onRead;
    }

    @Override
    public int read() throws IOException {
        int b = super.read();
        onRead.run();
        return b;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        int n = super.read(b, off, len);
        onRead.run();
        return n;
    }
}
