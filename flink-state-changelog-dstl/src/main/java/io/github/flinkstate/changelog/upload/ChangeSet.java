package io.github.flinkstate.changelog.upload;

import java.util.List;
import org.apache.flink.runtime.state.changelog.StateChange;

/**
 * The changes one writer appended under one sequence number, sealed and ready for upload; it
 * becomes exactly one segment of one DSTL file.
 *
 * <p>Thread safety: immutable (the list is never modified after sealing).
 *
 * @param sequenceNumber the writer-local sequence number of all these changes
 * @param changes the changes in append order, not empty
 * @param rawBytes the sum of the change payload sizes (used for batching and back-pressure)
 */
public record ChangeSet(long sequenceNumber, List<StateChange> changes, long rawBytes) {}
