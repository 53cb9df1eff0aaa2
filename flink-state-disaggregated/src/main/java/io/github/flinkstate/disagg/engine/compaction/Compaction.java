package io.github.flinkstate.disagg.engine.compaction;

import io.github.flinkstate.disagg.engine.key.KeyRange;
import io.github.flinkstate.disagg.engine.version.FileMeta;
import java.util.List;

/**
 * A picked unit of compaction work.
 *
 * @param level the level the compaction starts from
 * @param outputLevel where outputs go ({@code level + 1}, or {@code level} for a clip cleanup)
 * @param inputs files taken from {@code level}
 * @param nextInputs overlapping files taken from {@code outputLevel} (sorted, disjoint)
 * @param range union of the inputs' effective ranges; outputs stay inside it
 * @param bottommost true when no deeper level overlaps {@code range}: deletes can be dropped
 * @param trivialMove true when the single input can be moved down without rewriting
 */
public record Compaction(
        int level,
        int outputLevel,
        List<FileMeta> inputs,
        List<FileMeta> nextInputs,
        KeyRange range,
        boolean bottommost,
        boolean trivialMove) {

    public long inputBytes() {
        long sum = 0;
        for (FileMeta f : inputs) {
            sum += f.fileSize();
        }
        for (FileMeta f : nextInputs) {
            sum += f.fileSize();
        }
        return sum;
    }
}
