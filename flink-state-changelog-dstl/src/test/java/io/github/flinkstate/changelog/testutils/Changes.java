package io.github.flinkstate.changelog.testutils;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
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

    /**
     * Groups "keyGroup:value" strings by key group, keeping their order within a group: what a DSTL
     * must preserve (a segment stores metadata first and then the data changes by key group, as
     * Flink's own DSTL does, so the order across key groups is not the append order).
     */
    public static Map<String, List<String>> perKeyGroup(List<String> changes) {
        Map<String, List<String>> groups = new TreeMap<>();
        for (String change : changes) {
            String keyGroup = change.substring(0, change.indexOf(':'));
            groups.computeIfAbsent(keyGroup, k -> new ArrayList<>()).add(change);
        }
        return groups;
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
