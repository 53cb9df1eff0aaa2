package io.github.flinkstate.testing.fs;

import java.util.EnumMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Calls and bytes per {@link FsOp}, in total and per path (the path part of the URI, without scheme
 * and authority, e.g. {@code /tmp/x/file}).
 *
 * <p>Thread safety: thread-safe; counts are {@link LongAdder}s in concurrent maps. A reset racing
 * with calls may keep some of those calls.
 */
public final class FsCounters {

    private final Map<FsOp, LongAdder> calls = new EnumMap<>(FsOp.class);
    private final Map<FsOp, LongAdder> bytes = new EnumMap<>(FsOp.class);
    private final Map<String, PathCounts> perPath = new ConcurrentHashMap<>();

    FsCounters() {
        for (FsOp op : FsOp.values()) {
            calls.put(op, new LongAdder());
            bytes.put(op, new LongAdder());
        }
    }

    void call(FsOp op, String path) {
        calls.get(op).increment();
        perPath.computeIfAbsent(path, p -> new PathCounts()).calls.get(op).increment();
    }

    void bytes(FsOp op, String path, long n) {
        bytes.get(op).add(n);
        perPath.computeIfAbsent(path, p -> new PathCounts()).bytes.get(op).add(n);
    }

    /** Clears every count. */
    public void reset() {
        for (FsOp op : FsOp.values()) {
            calls.get(op).reset();
            bytes.get(op).reset();
        }
        perPath.clear();
    }

    /** Calls of {@code op} on any path. */
    public long calls(FsOp op) {
        return calls.get(op).sum();
    }

    /** Bytes transferred by {@code op} ({@link FsOp#WRITE} or {@link FsOp#READ}) on any path. */
    public long bytes(FsOp op) {
        return bytes.get(op).sum();
    }

    /** Calls of {@code op} on exactly {@code path} (a URI path such as {@code /tmp/a}). */
    public long calls(FsOp op, String path) {
        PathCounts c = perPath.get(path);
        return c == null ? 0 : c.calls.get(op).sum();
    }

    /** Bytes of {@code op} on exactly {@code path}. */
    public long bytes(FsOp op, String path) {
        PathCounts c = perPath.get(path);
        return c == null ? 0 : c.bytes.get(op).sum();
    }

    /** Calls of {@code op} on paths starting with {@code prefix} (e.g. a directory and "/"). */
    public long callsUnder(FsOp op, String prefix) {
        long n = 0;
        for (Map.Entry<String, PathCounts> e : perPath.entrySet()) {
            if (e.getKey().startsWith(prefix)) {
                n += e.getValue().calls.get(op).sum();
            }
        }
        return n;
    }

    /** Bytes of {@code op} on paths starting with {@code prefix}. */
    public long bytesUnder(FsOp op, String prefix) {
        long n = 0;
        for (Map.Entry<String, PathCounts> e : perPath.entrySet()) {
            if (e.getKey().startsWith(prefix)) {
                n += e.getValue().bytes.get(op).sum();
            }
        }
        return n;
    }

    /** The paths on which {@code op} was called at least once, sorted. */
    public Set<String> paths(FsOp op) {
        Set<String> paths = new TreeSet<>();
        for (Map.Entry<String, PathCounts> e : perPath.entrySet()) {
            if (e.getValue().calls.get(op).sum() > 0) {
                paths.add(e.getKey());
            }
        }
        return paths;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("FsCounters[");
        for (FsOp op : FsOp.values()) {
            long c = calls(op);
            if (c > 0) {
                sb.append(op).append('=').append(c);
                long b = bytes(op);
                if (b > 0) {
                    sb.append(" (").append(b).append(" B)");
                }
                sb.append(", ");
            }
        }
        return sb.append(']').toString();
    }

    private static final class PathCounts {
        final Map<FsOp, LongAdder> calls = new EnumMap<>(FsOp.class);
        final Map<FsOp, LongAdder> bytes = new EnumMap<>(FsOp.class);

        PathCounts() {
            for (FsOp op : FsOp.values()) {
                calls.put(op, new LongAdder());
                bytes.put(op, new LongAdder());
            }
        }
    }
}
