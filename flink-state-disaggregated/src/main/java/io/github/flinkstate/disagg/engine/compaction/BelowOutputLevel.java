package io.github.flinkstate.disagg.engine.compaction;

import io.github.flinkstate.disagg.engine.key.KeyRange;
import io.github.flinkstate.disagg.engine.sst.BloomFilter;
import io.github.flinkstate.disagg.engine.sst.ReaderCache;
import io.github.flinkstate.disagg.engine.version.FileMeta;
import io.github.flinkstate.disagg.engine.version.Version;
import java.io.IOException;
import java.util.function.ToIntFunction;

/**
 * The files below a compaction's output level, asked whether any of them may hold a key under a
 * prefix. A prefix tombstone exists to hide older keys; older keys than a compaction's inputs live
 * only in deeper levels (upper levels are newer), so a tombstone that no deeper file may hold a key
 * for has nothing left to hide once the compaction has applied it to its own inputs, and is not
 * written into the outputs. Lists replaced before they ever held anything (a new key's first {@code
 * update}) and lists whose old entries the compaction itself dropped lose their tombstone at their
 * first compaction instead of carrying it to the bottom level.
 *
 * <p>A deeper file may hold the prefix when its effective range overlaps the tombstone's scope and,
 * when the prefix is a whole bloom prefix of the store, its bloom filter admits the prefix. Files
 * without prefixes in their filter always may.
 *
 * <p>Thread safety: used by the compaction thread only; the version must stay pinned while it is
 * used.
 */
public final class BelowOutputLevel {

    private final Version version;
    private final int outputLevel;
    private final ReaderCache readers;
    private final ToIntFunction<byte[]> bloomPrefix;

    /**
     * @param bloomPrefix null, or the store's {@code LsmOptions.bloomPrefix}
     */
    public BelowOutputLevel(
            Version version,
            int outputLevel,
            ReaderCache readers,
            ToIntFunction<byte[]> bloomPrefix) {
        this.version = version;
        this.outputLevel = outputLevel;
        this.readers = readers;
        this.bloomPrefix = bloomPrefix;
    }

    /**
     * Whether a file below the output level may hold a key starting with {@code prefix} in {@code
     * scope}.
     */
    public boolean mayHold(byte[] prefix, KeyRange scope) throws IOException {
        if (outputLevel == 0) {
            return true; // other level-0 files may hold older keys; only levels >= 1 are ordered
        }
        KeyRange r = KeyRange.ofPrefix(prefix).intersect(scope);
        boolean bloom = bloomPrefix != null && bloomPrefix.applyAsInt(prefix) == prefix.length;
        long hash = bloom ? BloomFilter.hash(prefix) : 0;
        for (int l = outputLevel + 1; l < version.numLevels(); l++) {
            for (FileMeta f : version.overlapping(l, r)) {
                if (!bloom || readers.get(f.path(), f.fileSize()).mightContainPrefixHash(hash)) {
                    return true;
                }
            }
        }
        return false;
    }
}
