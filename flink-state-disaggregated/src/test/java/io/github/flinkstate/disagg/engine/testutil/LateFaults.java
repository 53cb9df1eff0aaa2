package io.github.flinkstate.disagg.engine.testutil;

/**
 * Makes the JVM deliver now an error it still holds for this thread from a faulted read of a
 * memory-mapped file. HotSpot reports such a fault (an {@link InternalError}) at the thread's next
 * call into its runtime, which may come after the read returned; a test calls this right after the
 * read, inside its own {@code try}, so that the error lands there and not in an assertion. An
 * allocation larger than any thread-local allocation buffer is such a call: with G1 (which the
 * build's test configuration pins) and its heap of 2 GiB (regions of 1 MiB) an array of 2 MiB is a
 * humongous object, never allocated in a thread's buffer.
 */
public final class LateFaults {

    /** Keeps the allocation from being optimized away. */
    private static volatile byte[] sink;

    private LateFaults() {}

    public static void deliver() {
        sink = new byte[2 << 20];
        sink = null;
    }
}
