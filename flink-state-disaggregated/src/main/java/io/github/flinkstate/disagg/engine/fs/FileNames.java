package io.github.flinkstate.disagg.engine.fs;

import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.core.fs.Path;

/**
 * Names the files one store instance writes in its primary directory: {@code
 * <primaryDir>/<instanceId>-<number>.sst}. The instance id is random per opened store, so several
 * stores (or several incarnations of one) can share a directory without clashes.
 *
 * <p>Thread safety: thread-safe.
 */
public final class FileNames {

    public static final String SST_SUFFIX = ".sst";

    private final Path dir;
    private final String instanceId;
    private final AtomicLong next = new AtomicLong(1);

    public FileNames(Path dir) {
        this.dir = dir;
        this.instanceId = UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    }

    public Path nextSst() {
        return new Path(
                dir, String.format("%s-%06d%s", instanceId, next.getAndIncrement(), SST_SUFFIX));
    }

    public String instanceId() {
        return instanceId;
    }

    public Path dir() {
        return dir;
    }
}
