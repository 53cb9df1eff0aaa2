package io.github.flinkstate.testing.fs;

/**
 * The kinds of file system operation that {@link InjectingFileSystem} delays, fails, hangs and
 * counts. Calls are counted per kind; bytes are counted for {@link #WRITE} and {@link #READ}.
 */
public enum FsOp {
    /** {@code create(path, mode)}: opening a file for writing. */
    CREATE,
    /** One {@code write} call on an output stream (bytes counted). */
    WRITE,
    /** Closing an output stream: the moment a DFS makes the upload durable and visible. */
    CLOSE,
    /** {@code sync()} on an output stream: what makes its bytes durable before the close. */
    SYNC,
    /** {@code open(path)}. */
    OPEN,
    /** One {@code read} call on an input stream that returned data (bytes counted). */
    READ,
    /** {@code getFileStatus(path)} (and so {@code exists(path)}). */
    STATUS,
    /** {@code listStatus(dir)}. */
    LIST,
    /** {@code delete(path, recursive)}. */
    DELETE,
    /** {@code rename(src, dst)} (counted on the source path). */
    RENAME,
    /** {@code mkdirs(path)}. */
    MKDIRS
}
