package io.github.flinkstate.changelog.testutils;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.runtime.state.changelog.ChangelogStateHandleStreamImpl;
import org.apache.flink.runtime.state.changelog.StateChange;
import org.apache.flink.runtime.state.changelog.StateChangelogHandleReader;
import org.apache.flink.util.CloseableIterator;

/** Helpers to read changes back as strings. */
public final class Changes {

    private Changes() {}

    public static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Reads all changes of the handle as "keyGroup:value" strings. */
    public static List<String> read(
            StateChangelogHandleReader<ChangelogStateHandleStreamImpl> reader,
            ChangelogStateHandleStreamImpl handle)
            throws Exception {
        List<String> result = new ArrayList<>();
        try (CloseableIterator<StateChange> it = reader.getChanges(handle)) {
            while (it.hasNext()) {
                StateChange change = it.next();
                result.add(
                        change.getKeyGroup()
                                + ":"
                                + new String(change.getChange(), StandardCharsets.UTF_8));
            }
        }
        return result;
    }
}
