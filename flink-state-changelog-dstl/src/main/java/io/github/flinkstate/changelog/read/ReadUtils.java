package io.github.flinkstate.changelog.read;

import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;

/** Small helpers shared by the read path. Thread safety: stateless. */
final class ReadUtils {

    private ReadUtils() {}

    /** A human-readable name of the file behind a handle, for error messages. */
    static String nameOf(StreamStateHandle handle) {
        if (handle instanceof FileStateHandle) {
            return ((FileStateHandle) handle).getFilePath().toString();
        }
        return handle.getStreamStateHandleID().getKeyString();
    }
}
